"""Export from one TOKA_HOME, import into a fresh one: the same ids, the same export, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import home, invoke, json_lines, toka


def _record_session() -> None:
    steps = [
        ("message", '{"role": "user", "text": "Refactor the parser"}', ["--agent", "main"]),
        ("tool.call", '{"tool": "Read", "input": {"file_path": "parser.py"}}', ["--agent", "main"]),
        ("tool.result", '{"ok": true, "output": "def parse(text): ... é ✓"}', ["--agent", "main"]),
        ("note.decision", '{"text": "keep the grammar LL(1)"}', ["--agent", "planner", "--key", "decision-1"]),
        ("usage", '{"input_tokens": 1200, "output_tokens": 300}', ["--ts", "2026-01-31T12:00:00.5Z"]),
    ]
    for kind, payload, extra in steps:
        result = invoke("record", "S", kind, payload, *extra)
        assert result.exit_code == 0, result.stderr
    # A batch from stdin: two more events in one request.
    result = invoke("record", "S", "message", "--agent", "main", input='{"text": "a"}\n{"text": "b"}\n')
    assert result.exit_code == 0, result.stderr


def test_export_then_import_into_a_fresh_home(
    tmp_path: Path, other_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _record_session()
    exported = toka("export", "S")
    assert exported.returncode == 0, exported.stderr
    assert exported.stderr == ""
    dump = tmp_path / "S.jsonl"
    dump.write_text(exported.stdout, encoding="utf-8")
    original = json_lines(exported.stdout)
    assert len(original) == 7
    assert {e["kind"] for e in original} == {"message", "tool.call", "tool.result", "note.decision", "usage"}
    assert {e["agent"] for e in original} == {"main", "planner", None}
    assert [e["key"] for e in original if e["key"]] == ["decision-1"]
    first_home = home()

    stopped = toka("daemon", "stop")
    assert stopped.returncode == 0, stopped.stderr

    monkeypatch.setenv("TOKA_HOME", str(other_home))
    assert home() != first_home
    imported = toka("import", str(dump), "--json")
    assert imported.returncode == 0, imported.stderr
    assert json.loads(imported.stdout) == {
        "files": 1,
        "formats": {"toka": 1},
        "events": 7,
        "created": 7,
        "existing": 0,
        "sessions": ["S"],
        "unknown_types": {},
        "unknown_types_created": {},
        "bad_lines": [],
    }
    assert (other_home / "toka.db").exists()

    again = toka("export", "S")
    assert [e["id"] for e in json_lines(again.stdout)] == [e["id"] for e in original]
    assert again.stdout.encode() == dump.read_bytes()
    assert toka("verify").returncode == 0

    # The key survives the trip: recording it again in the new home is a no-op.
    result = invoke(
        "record",
        "S",
        "note.decision",
        '{"text": "keep the grammar LL(1)"}',
        "--agent",
        "planner",
        "--key",
        "decision-1",
        "--json",
    )
    assert json.loads(result.stdout)["events"][0]["created"] is False

    assert toka("daemon", "stop").returncode == 0


def test_export_to_a_file_matches_stdout(example: str, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = invoke("export", example, "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == f"exported 23 events to {out}\n"
    assert out.read_text() == invoke("export", example).stdout
    assert not out.with_name("out.jsonl.tmp").exists()


def test_export_of_an_unknown_session_leaves_no_file(example: str, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = invoke("export", "nope", "-o", str(out))
    assert result.exit_code == 3
    assert result.stderr.startswith("error: no session matches 'nope'")
    assert list(tmp_path.iterdir()) == []


def test_round_trip_of_one_session_among_others(
    tmp_path: Path, other_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Sessions interleave in the log, so a session's seqs (global positions) are not 1..n.
    for session, n in (("A", 1), ("B", 1), ("A", 2), ("B", 2), ("A", 3)):
        assert invoke("record", session, "message", json.dumps({"n": n})).exit_code == 0
    dump = tmp_path / "A.jsonl"
    assert invoke("export", "A", "-o", str(dump)).exit_code == 0
    original = json_lines(dump.read_text())
    assert [e["seq"] for e in original] == [1, 3, 5]

    monkeypatch.setenv("TOKA_HOME", str(other_home))
    assert invoke("import", str(dump)).exit_code == 0
    copy = json_lines(invoke("export", "A").stdout)
    # Everything that is hashed comes back the same; seq is the new log's own position.
    assert [{**e, "seq": None} for e in copy] == [{**e, "seq": None} for e in original]
    assert [e["seq"] for e in copy] == [1, 2, 3]
    assert invoke("verify").exit_code == 0
