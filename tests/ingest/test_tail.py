"""Following growing files (daemon/ingest/tail.py): complete lines only, cursors that survive a
restart, files replaced under the cursor, and every fixture followed line by line giving what
an import of the whole file gives."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import large_records
import pytest
import watch_support
from large_records import MiB
from transcripts import TRANSCRIPTS, shared_or_skip

from daemon.batching import MAX_BATCH_BYTES
from daemon.ingest import tail as tail_module
from daemon.ingest.formats import PARSERS, detect
from daemon.ingest.lines import ParseStats
from daemon.ingest.tail import Cursors, Tail

Event = dict[str, Any]


def read(tail: Tail, path: Path, stats: ParseStats | None = None) -> list[Event]:
    events = [event for batch in tail.read(path, stats or ParseStats()) for _, event in batch]
    tail.commit(path)
    return events


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    return tmp_path / f"{watch_support.SESSION}.jsonl"


@pytest.fixture
def cursors(tmp_path: Path) -> Cursors:
    return Cursors(tmp_path / "cursors")


def test_a_line_without_its_newline_waits_until_it_is_complete(transcript: Path, cursors: Cursors) -> None:
    first, second = watch_support.lines()[:2]
    watch_support.append(transcript, first + second[:40])
    tail = Tail(cursors)
    stats = ParseStats()
    assert [e["kind"] for e in read(tail, transcript, stats)] == ["session.meta", "message"]
    assert stats.bad_lines == []  # the half line is not reported: it is being written
    watch_support.append(transcript, second[40:])
    events = read(tail, transcript)
    assert [e["kind"] for e in events] == ["message", "usage"]  # the response's usage once it is read
    assert events[0]["payload"]["text"] == "Let me look at the session code."


def test_a_file_of_large_records_is_read_a_few_megabytes_at_a_time(tmp_path: Path, cursors: Cursors) -> None:
    path = large_records.write_reads(tmp_path / "reads.jsonl", [MiB] * 12)
    batches = list(Tail(cursors).read(path, ParseStats()))
    assert len(batches) > 1
    for batch in batches:
        sizes = [len(event["payload"].get("output", "")) for _, event in batch]
        assert sum(sizes) <= MAX_BATCH_BYTES + MiB  # the record that closed it is in the next one
    results = [(line, event["key"]) for batch in batches for line, event in batch if event["kind"] == "tool.result"]
    assert results == [(2 * n + 2, f"r{n}:0") for n in range(12)]  # each with the number of its line


def test_a_new_tail_carries_on_from_the_saved_cursor(transcript: Path, cursors: Cursors) -> None:
    lines = watch_support.lines()
    watch_support.append(transcript, b"".join(lines[:2]))
    first = read(Tail(cursors), transcript)
    watch_support.append(transcript, b"".join(lines[2:]))
    after_restart = read(Tail(cursors), transcript)
    keys = [e["key"] for e in first + after_restart]
    assert len(keys) == len(set(keys))
    assert {e["key"] for e in after_restart} >= {"u2:0", "a3:0"}
    assert not {e["key"] for e in after_restart} & {"u1:0", "a1:0"}  # nothing read twice
    assert read(Tail(cursors), transcript) == []


def test_forget_reads_again_from_the_last_commit(transcript: Path, cursors: Cursors) -> None:
    lines = watch_support.lines()
    watch_support.append(transcript, lines[0])
    tail = Tail(cursors)
    read(tail, transcript)
    watch_support.append(transcript, lines[1])
    lost = [e for batch in tail.read(transcript, ParseStats()) for _, e in batch]  # the caller failed to store it
    tail.forget(transcript)
    assert read(tail, transcript) == lost


def test_a_response_that_goes_on_after_a_read_adds_a_revision(transcript: Path, cursors: Cursors) -> None:
    lines = watch_support.lines()
    watch_support.append(transcript, b"".join(lines[:2]))
    tail = Tail(cursors)
    first = [e for e in read(tail, transcript) if e["kind"] == "usage"]
    assert [e["payload"]["output_tokens"] for e in first] == [3]
    watch_support.append(transcript, lines[2])
    revisions = [e for e in read(Tail(cursors), transcript) if e["kind"] == "usage"]
    assert len(revisions) == 1
    assert revisions[0]["key"] == "usage:msg-1:req-msg-1:+180"
    assert revisions[0]["payload"]["revision"] is True
    assert revisions[0]["payload"]["output_tokens"] == 177  # 3 counted before, 180 in all


@pytest.mark.parametrize("change", ["truncated", "replaced", "rewritten"])
def test_a_file_changed_under_its_cursor_is_read_from_its_start(
    transcript: Path, cursors: Cursors, change: str
) -> None:
    lines = watch_support.lines()
    watch_support.append(transcript, b"".join(lines))
    read(Tail(cursors), transcript)
    if change == "truncated":
        transcript.write_bytes(lines[0])
    elif change == "replaced":
        other = transcript.with_suffix(".new")
        other.write_bytes(b"".join(lines))
        os.replace(other, transcript)
    else:  # same inode and size, other bytes before the cursor
        with transcript.open("r+b") as handle:
            handle.write(lines[0].replace(b"login", b"LOGIN"))
    events = read(Tail(cursors), transcript)
    assert events and events[0]["kind"] == "session.meta"


def test_a_file_of_no_known_format_is_reported_once(tmp_path: Path, cursors: Cursors) -> None:
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"hello": "world"}\n')
    tail = Tail(cursors)
    stats = ParseStats()
    assert read(tail, odd, stats) == []
    assert [b.reason for b in stats.bad_lines] == ["not a format toka knows (name one with --format)"]
    again = ParseStats()
    assert read(tail, odd, again) == [] and again.bad_lines == []


def test_a_file_with_no_complete_record_yet_waits_for_one(transcript: Path, cursors: Cursors) -> None:
    line = watch_support.lines()[0]
    watch_support.append(transcript, line[:30])
    tail = Tail(cursors)
    stats = ParseStats()
    assert read(tail, transcript, stats) == [] and stats.bad_lines == []
    watch_support.append(transcript, line[30:])
    assert [e["kind"] for e in read(tail, transcript)] == ["session.meta", "message"]


def _followed(source: Path, target: Path, cursors: Cursors, restart_every: int) -> list[Event]:
    """``source`` written to ``target`` line by line, each line in two halves, read after each
    write by a Tail that is replaced by a new one (a restart) every ``restart_every`` lines."""
    tail = Tail(cursors)
    events: list[Event] = []
    for number, line in enumerate(source.read_bytes().splitlines(keepends=True), 1):
        for part in (line[: len(line) // 2], line[len(line) // 2 :]):
            watch_support.append(target, part)
            events += read(tail, target)
        if number % restart_every == 0:
            tail = Tail(cursors)
    return events + read(tail, target)  # unchanged since the last read: settled (SETTLE_S is 0)


def _usage_totals(events: list[Event]) -> dict[str, Counter[str]]:
    totals: dict[str, Counter[str]] = {}
    for event in events:
        if event["kind"] == "usage":
            counts = totals.setdefault(event["session"], Counter())
            for name in ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens"):
                counts[name] += event["payload"].get(name) or 0
            counts["responses"] += 0 if event["payload"].get("revision") else 1
    return totals


def _by_key(events: list[Event]) -> dict[tuple[str, str], Event]:
    """The events as the store keeps them: the first of each key (some fixtures repeat records)."""
    found: dict[tuple[str, str], Event] = {}
    for event in events:
        found.setdefault((event["session"], event["key"]), event)
    return found


def _followed_matches_whole(source: Path, target: Path, cursors: Cursors) -> None:
    followed = _followed(source, target, cursors, restart_every=7)
    fmt = detect(target)
    assert fmt is not None
    whole = list(PARSERS[fmt](target, ParseStats()))
    originals = [e for e in followed if not e["payload"].get("revision")]
    assert Counter((e["session"], e["key"]) for e in originals) == Counter((e["session"], e["key"]) for e in whole)
    followed_by_key = _by_key(originals)
    whole_by_key = _by_key(whole)
    for key, event in whole_by_key.items():
        mine = followed_by_key[key]
        assert (mine["agent"], mine["kind"]) == (event["agent"], event["kind"]), key
        if event["kind"] != "usage":  # a usage event's output may have grown in revisions since
            assert mine["payload"] == event["payload"], key
    assert _usage_totals(followed) == _usage_totals(whole)


@pytest.fixture
def settle_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tail_module, "SETTLE_S", 0.0)


@pytest.mark.usefixtures("settle_at_once")
def test_the_example_transcript_followed_line_by_line_matches_its_import(tmp_path: Path, cursors: Cursors) -> None:
    source = tmp_path / "source.jsonl"
    source.write_bytes(b"".join(watch_support.lines()))
    _followed_matches_whole(source, tmp_path / "followed" / source.name, _mkdir(cursors, tmp_path / "followed"))


def _fixtures() -> list[Path]:
    if not TRANSCRIPTS.exists():
        return []
    return sorted(p for p in TRANSCRIPTS.rglob("*.jsonl") if "hooks" not in p.parts)


@pytest.mark.slow
@pytest.mark.usefixtures("settle_at_once")
@pytest.mark.parametrize("source", _fixtures() or [TRANSCRIPTS / "claude"], ids=lambda p: p.name[:48])
def test_every_fixture_followed_line_by_line_matches_its_import(source: Path, tmp_path: Path, cursors: Cursors) -> None:
    shared_or_skip("fixtures", "transcripts")
    target = tmp_path / "followed" / source.relative_to(TRANSCRIPTS)
    _followed_matches_whole(source, target, _mkdir(cursors, target.parent))


def _mkdir(cursors: Cursors, folder: Path) -> Cursors:
    folder.mkdir(parents=True, exist_ok=True)
    return cursors
