"""Large records through `toka import`, `toka watch` and `toka record`: requests are cut by their
size in bytes, never past the daemon's line limit, and a record too large for any request is
stored truncated with its digest and named, its neighbours all stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import toka
from large_records import SESSION, MiB, output, write_reads
from watch_support import Watching

from daemon.client.sync import Client
from daemon.ingest.claude_code import parse_claude_code
from daemon.ingest.lines import ParseStats
from store.events import canonical_json, digest

# The daemon's default daemon.max_line_bytes.
LINE_LIMIT = 4 * MiB
# 400 reads of 20 KB: 8 MB of tool results, twice the limit within 1,000 events.
READS = 400
READ_BYTES = 20_000
# Five small reads, one of 10 MiB (read 5, lines 11 and 12), five small reads.
BIG = 5
SIZES = [2_000] * BIG + [10 * MiB] + [2_000] * 5


def _results() -> list[dict[str, Any]]:
    with Client(autostart=False) as client:
        return list(client.iter_events(session=SESSION, kinds=["tool.result"]))


def _whole_payload(path: Path, key: str) -> dict[str, Any]:
    """The payload the importer makes of the record ``key``, whole."""
    [event] = [e for e in parse_claude_code(path, ParseStats()) if e.get("key") == key]
    payload: dict[str, Any] = event["payload"]
    return payload


def _assert_many_reads_stored(results: list[dict[str, Any]]) -> None:
    assert len(results) == READS
    assert [len(e["payload"]["output"]) for e in results] == [READ_BYTES] * READS
    assert results[123]["payload"]["output"] == output(123, READ_BYTES)


def _assert_big_one_truncated(path: Path, results: list[dict[str, Any]]) -> None:
    assert [e["key"] for e in results] == [f"r{n}:0" for n in range(len(SIZES))]
    for n, event in enumerate(results):
        if n != BIG:
            assert event["payload"]["output"] == output(n, SIZES[n])
            assert "toka_truncated" not in event["payload"]
    big = results[BIG]["payload"]
    whole = _whole_payload(path, f"r{BIG}:0")
    canonical = canonical_json(whole)
    assert big["toka_truncated"] == {"bytes": len(canonical), "digest": digest(canonical), "limit": LINE_LIMIT}
    assert big["tool_use_id"] == whole["tool_use_id"]
    assert whole["output"].startswith(big["output"].removesuffix("…"))
    assert 100_000 < len(json.dumps(big)) < LINE_LIMIT


def _assert_named(text: str, path: Path) -> None:
    [note] = [line for line in text.splitlines() if "stored truncated" in line]
    assert f"{path}:{2 * BIG + 2}: " in note
    assert f"r{BIG}:0" in note and "daemon.max_line_bytes" in note


def test_import_stores_many_large_tool_results(tmp_path: Path) -> None:
    path = write_reads(tmp_path / "reads.jsonl", [READ_BYTES] * READS)
    assert path.stat().st_size > 2 * LINE_LIMIT
    result = toka("import", str(path), "--json", timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["bad_lines"] == [] and report["created"] == report["events"]
    _assert_many_reads_stored(_results())


def test_import_stores_a_record_over_the_line_limit_truncated_and_its_neighbours_whole(tmp_path: Path) -> None:
    path = write_reads(tmp_path / "big.jsonl", SIZES)
    result = toka("import", str(path), timeout=120)
    assert result.returncode == 1, result.stderr  # a marked error: one record was cut
    _assert_named(result.stderr, path)
    _assert_big_one_truncated(path, _results())
    again = toka("import", str(path), "--json", timeout=120)
    report = json.loads(again.stdout)
    assert report["created"] == 0  # the cut record keeps its key: importing again adds nothing
    [bad] = report["bad_lines"]
    assert (bad["path"], bad["line"]) == (str(path), 2 * BIG + 2)


@pytest.mark.slow
def test_watch_stores_many_large_tool_results(tmp_path: Path) -> None:
    path = write_reads(tmp_path / "projects" / f"{SESSION}.jsonl", [READ_BYTES] * READS)
    watching = Watching(str(path.parent), "--json")
    try:
        printed = [json.loads(line) for line in watching.next_lines(3 * READS + 1, patience=60)]
    finally:
        code, stderr = watching.stop()
    assert code == 0, stderr
    assert sum(1 for e in printed if e["kind"] == "tool.result") == READS
    _assert_many_reads_stored(_results())


@pytest.mark.slow
def test_watch_stores_a_record_over_the_line_limit_truncated_and_goes_on(tmp_path: Path) -> None:
    path = write_reads(tmp_path / "projects" / f"{SESSION}.jsonl", SIZES)
    watching = Watching(str(path.parent), "--json")
    try:
        printed = [json.loads(line) for line in watching.next_lines(3 * len(SIZES) + 1, patience=60)]
        with path.open("ab") as handle:  # the watch goes on after it
            handle.write(
                json.dumps(
                    {"type": "user", "sessionId": SESSION, "uuid": "late", "message": {"content": "hi"}}
                ).encode()
                + b"\n"
            )
        [late] = [json.loads(line) for line in watching.next_lines(1)]
    finally:
        code, stderr = watching.stop()
    assert code == 0, stderr
    assert late["key"] == "late:0"
    [shown] = [e for e in printed if e["key"] == f"r{BIG}:0"]
    assert "toka_truncated" in shown["payload"]  # what was stored, not the whole record
    _assert_named(stderr, path)
    _assert_big_one_truncated(path, _results())


def test_record_batches_by_size(tmp_path: Path) -> None:
    lines = "".join(json.dumps({"output": output(n, READ_BYTES)}) + "\n" for n in range(READS))
    result = toka("record", "s", "tool.result", "--json", input=lines, timeout=120)
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["events"]) == READS
    with Client(autostart=False) as client:
        stored = list(client.iter_events(session="s"))
    assert [e["payload"]["output"] for e in stored] == [output(n, READ_BYTES) for n in range(READS)]


def test_record_of_a_payload_over_the_line_limit_stores_it_truncated_and_says_so(tmp_path: Path) -> None:
    payloads = [{"n": 0}, {"n": 1, "output": output(1, 10 * MiB)}, {"n": 2}]
    result = toka("record", "s", "tool.result", "--json", input="".join(json.dumps(p) + "\n" for p in payloads))
    assert result.returncode == 1
    assert len(json.loads(result.stdout)["events"]) == 3
    [note] = result.stderr.splitlines()
    assert note.startswith("stdin line 2: ") and "stored truncated" in note, note
    with Client(autostart=False) as client:
        stored = [e["payload"] for e in client.iter_events(session="s")]
    assert stored[0] == {"n": 0} and stored[2] == {"n": 2}
    canonical = canonical_json(payloads[1])
    assert stored[1]["toka_truncated"] == {"bytes": len(canonical), "digest": digest(canonical), "limit": LINE_LIMIT}
    assert stored[1]["n"] == 1 and payloads[1]["output"].startswith(stored[1]["output"].removesuffix("…"))
