"""A Claude Code response imported while it was still being written, then imported again once
it went on: the output it gained is counted, once, however often the file is imported."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import watch_support
from cli_support import invoke


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))


def _import(path: Path) -> dict[str, Any]:
    result = invoke("import", str(path), "--json")
    assert result.exit_code == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def _output_tokens() -> int:
    result = invoke("usage", watch_support.SESSION, "--json")
    assert result.exit_code == 0, result.stderr
    tokens: int = json.loads(result.stdout)["output_tokens"]
    return tokens


def _usage_events() -> list[dict[str, Any]]:
    result = invoke("events", watch_support.SESSION, "--kind", "usage", "--json")
    assert result.exit_code == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def _grown(record: dict[str, Any], uuid: str, output: int) -> dict[str, Any]:
    """``record``, a later block of the same response that has written ``output`` tokens."""
    grown = copy.deepcopy(record)
    grown["uuid"] = uuid
    grown["message"]["usage"]["output_tokens"] = output
    return grown


def test_output_a_response_gained_after_an_import_is_counted_once(tmp_path: Path) -> None:
    user, first_block, second_block = watch_support.transcript()[:3]  # the response: 3, then 180 tokens out
    target = tmp_path / f"{watch_support.SESSION}.jsonl"
    _write(target, [user, first_block])
    _import(target)
    assert _output_tokens() == 3
    _write(target, [user, first_block, second_block])
    _import(target)
    assert _output_tokens() == 180
    _import(target)
    assert _output_tokens() == 180
    revisions = [e for e in _usage_events() if e["payload"].get("revision")]
    assert [(e["key"], e["payload"]["output_tokens"]) for e in revisions] == [("usage:msg-1:req-msg-1:+180", 177)]


def test_revisions_already_counted_are_not_counted_again(tmp_path: Path) -> None:
    user, first_block, last_block = watch_support.transcript()[:3]
    middle_block = _grown(first_block, "a1b", 100)
    target = tmp_path / f"{watch_support.SESSION}.jsonl"
    for upto, expected in ((2, 3), (3, 100), (4, 180), (4, 180)):
        _write(target, [user, first_block, middle_block, last_block][:upto])
        _import(target)
        assert _output_tokens() == expected
    assert sum(e["payload"]["output_tokens"] for e in _usage_events()) == 180
