"""The Claude Code transcript parser: against every real fixture (figures computed here from the
raw JSON with plain code of their own), and against broken files written for the test."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from transcripts import TRANSCRIPTS

from daemon.ingest import lines
from daemon.ingest.claude_code import ParseStats, parse_claude_code
from daemon.ingest.transcripts import find_transcripts
from store.events import format_ts, parse_new_event

CLAUDE = TRANSCRIPTS / "claude"
SESSION = "11111111-2222-3333-4444-555555555555"


def fixture_files() -> list[str]:
    if not CLAUDE.is_dir():
        return ["absent"]  # one placeholder, so the test runs and skips with the reason
    return [str(p.relative_to(CLAUDE)) for p in find_transcripts(CLAUDE)]


def claude_fixture(name: str) -> Path:
    path = CLAUDE / name
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared fixtures are not checked out beside the project")
    return path


def parse(path: Path) -> tuple[list[dict[str, Any]], ParseStats]:
    stats = ParseStats()
    return list(parse_claude_code(path, stats)), stats


def records_of(path: Path) -> Iterator[dict[str, Any]]:
    with path.open("rb") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def expected_figures(path: Path) -> dict[str, Any]:
    """The figures the parser must reach, from the raw records, written without its helpers."""
    figures: Counter[str] = Counter()
    agents: set[str] = set()
    responses: dict[tuple[Any, Any], dict[str, Any]] = {}
    in_agent_file = path.name.startswith("agent-")
    inline: dict[str, str] = {}  # 1.0.x inline sidechains: uuid -> the Task call's agent
    for record in records_of(path):
        if in_agent_file or (record.get("isSidechain") and record.get("agentId")):
            agents.add(record.get("agentId"))
        elif record.get("isSidechain"):
            parent = record.get("parentUuid")
            name = inline[parent] if parent else "sidechain-" + record["uuid"][:8]
            inline[record["uuid"]] = name
            agents.add(name)
        if record.get("type") == "system" and record.get("subtype") == "compact_boundary":
            figures["compaction"] += 1
        if record.get("type") not in ("user", "assistant"):
            continue
        message = record.get("message") or {}
        content = message.get("content")
        if record.get("isCompactSummary"):
            # The summary a compaction left, after its boundary; 1.0.x writes no boundary.
            figures["compaction" if record.get("parentUuid") is None else "compaction.summary"] += 1
        elif isinstance(content, str):
            figures["message"] += 1
        elif isinstance(content, list):
            for block in content:
                name = {"text": "message", "tool_use": "tool.call", "tool_result": "tool.result"}.get(block.get("type"))
                if name:
                    figures[name] += 1
        usage = message.get("usage")
        if record["type"] == "assistant" and isinstance(usage, dict):
            if message.get("model") == "<synthetic>" or record.get("isApiErrorMessage"):
                continue
            response = (message.get("id"), record.get("requestId"))
            if response not in responses or usage["output_tokens"] > responses[response]["output_tokens"]:
                responses[response] = usage
    figures["usage"] = len(responses)
    for usage in responses.values():
        figures["input_tokens"] += usage.get("input_tokens", 0)
        figures["output_tokens"] += usage.get("output_tokens", 0)
        figures["cache_creation_tokens"] += usage.get("cache_creation_input_tokens", 0)
        figures["cache_read_tokens"] += usage.get("cache_read_input_tokens", 0)
    return {"figures": figures, "agents": agents}


def parsed_figures(events: list[dict[str, Any]]) -> dict[str, Any]:
    figures: Counter[str] = Counter(e["kind"] for e in events if e["kind"] != "thinking")
    for event in events:
        if event["kind"] == "usage":
            for name in ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens"):
                figures[name] += event["payload"][name]
    agents = {e["agent"] for e in events if e["agent"] != "main"}
    return {"figures": figures, "agents": agents}


@pytest.mark.parametrize("name", fixture_files())
def test_every_fixture_parses_with_no_bad_line_into_valid_events(name: str) -> None:
    events, stats = parse(claude_fixture(name))
    assert stats.bad_lines == []
    assert stats.events == len(events) > 0
    assert stats.records == sum(1 for _ in records_of(CLAUDE / name))
    for event in events:
        parse_new_event(event)  # raises on anything events.append would refuse


@pytest.mark.parametrize("name", fixture_files())
def test_fixture_counts_and_usage_totals_match_the_raw_records(name: str) -> None:
    path = claude_fixture(name)
    events, _ = parse(path)
    expected, got = expected_figures(path), parsed_figures(events)
    for figure in (
        "message",
        "tool.call",
        "tool.result",
        "compaction",
        "compaction.summary",
        "usage",
        "input_tokens",
        "output_tokens",
        "cache_creation_tokens",
        "cache_read_tokens",
    ):
        assert got["figures"][figure] == expected["figures"][figure], figure
    assert got["agents"] == expected["agents"]


@pytest.mark.parametrize("name", fixture_files())
def test_keys_are_unique_per_session_unless_a_uuid_repeats(name: str) -> None:
    path = claude_fixture(name)
    events, _ = parse(path)
    uuids = Counter(r.get("uuid") for r in records_of(path) if r.get("uuid"))
    repeated = {u for u, n in uuids.items() if n > 1}
    keys = Counter((e["session"], e["key"]) for e in events)
    for (_, key), count in keys.items():
        if count > 1:
            assert any(u in key for u in repeated), key


# From shared/docs/agent-formats.md 1.8: preTokens of the boundary, and the prompt size of the
# last main-chain response before it.
COMPACTIONS = [
    ("marot__fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl", 167117, 166874),
    ("marot__258c7280-ae70-4798-800f-63464d01a85d.jsonl", 167094, 166759),
    ("marot__8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl", 167731, 167094),
    ("codemie-ai__session-624a4a58.jsonl", 155979, 155741),
    ("kesslerio__logs__chat.bbf59ca.6706089d-9d7e-4f48-bd2d-8f2a2546eb78.jsonl", None, 163695),
]
# Written by hand to exercise schema drift: its token figures mean nothing (agent-formats.md 4.1).
SYNTHETIC = {"jazzyalex__stage0_claude_small.jsonl"}


def last_main_context_before_compaction(events: list[dict[str, Any]]) -> tuple[int | None, Any]:
    context = None
    for event in events:
        if event["kind"] == "usage" and event["agent"] == "main" and not event["payload"]["sidechain"]:
            assert event["payload"]["model"] != "<synthetic>"
            context = event["payload"]["context_tokens"]
        if event["kind"] == "compaction":
            return context, event["payload"].get("pre_tokens")
    raise AssertionError("no compaction event")


@pytest.mark.parametrize(("name", "pre_tokens", "context_before"), COMPACTIONS)
def test_context_before_a_compaction_is_what_the_boundary_reports(
    name: str, pre_tokens: int | None, context_before: int
) -> None:
    events, _ = parse(claude_fixture(name))
    context, reported = last_main_context_before_compaction(events)
    assert context == context_before
    assert reported == pre_tokens
    if pre_tokens is not None:
        assert abs(context - pre_tokens) <= pre_tokens / 100


def test_every_fixture_with_a_boundary_is_in_the_compaction_table() -> None:
    if not CLAUDE.is_dir():
        pytest.skip(f"{CLAUDE} is absent: the shared fixtures are not checked out beside the project")
    with_pre_tokens = set()
    for path in find_transcripts(CLAUDE):
        if path.name in SYNTHETIC:
            continue
        for record in records_of(path):
            metadata = record.get("compactMetadata") or {}
            if record.get("subtype") == "compact_boundary" and metadata.get("preTokens"):
                with_pre_tokens.add(str(path.relative_to(CLAUDE)))
    assert with_pre_tokens == {name for name, pre_tokens, _ in COMPACTIONS if pre_tokens}


def test_subagent_files_land_in_the_parent_session_under_their_own_agent() -> None:
    main = claude_fixture("marot__fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    sessions: Counter[str] = Counter()
    agents: set[str] = set()
    for path in find_transcripts(main):
        events, _ = parse(path)
        sessions.update(e["session"] for e in events)
        agents.update(e["agent"] for e in events)
    assert set(sessions) == {"fa812bfe-b295-4cca-9c2f-fdf01028cb46"}
    assert agents == {"main", "a93ccab", "aa84377", "acompact-70d8e7"}


# Broken and unusual files, written for the test.


def line(record: dict[str, Any]) -> bytes:
    return json.dumps(record).encode() + b"\n"


def user(uuid: str, text: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": uuid,
        "sessionId": SESSION,
        "timestamp": "2026-01-31T12:00:00.000Z",
        "message": {"role": "user", "content": text},
        **fields,
    }


def assistant(uuid: str, message_id: str, output: int, block: dict[str, Any], **fields: Any) -> dict[str, Any]:
    usage = {"input_tokens": 3, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000}
    return {
        "type": "assistant",
        "uuid": uuid,
        "sessionId": SESSION,
        "requestId": f"req_{message_id}",
        "timestamp": "2026-01-31T12:00:01.000Z",
        "message": {
            "id": message_id,
            "model": fields.pop("model", "claude-opus-4-6"),
            "content": [block],
            "usage": {**usage, "output_tokens": output},
        },
        **fields,
    }


def write(tmp_path: Path, data: bytes, name: str = f"{SESSION}.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_a_truncated_last_line_is_a_bad_line_and_the_rest_is_kept(tmp_path: Path) -> None:
    path = write(tmp_path, line(user("u1", "hello")) + line(user("u2", "again"))[:30])
    events, stats = parse(path)
    assert [e["payload"]["text"] for e in events if e["kind"] == "message"] == ["hello"]
    assert [(b.line, b.reason.split(" (")[0]) for b in stats.bad_lines] == [(2, "truncated last line")]


def test_a_line_that_is_not_json_is_reported_and_parsing_continues(tmp_path: Path) -> None:
    path = write(tmp_path, line(user("u1", "one")) + b"this is not json\n" + b"[1, 2]\n" + line(user("u2", "two")))
    events, stats = parse(path)
    assert [e["payload"]["text"] for e in events if e["kind"] == "message"] == ["one", "two"]
    assert [b.line for b in stats.bad_lines] == [2, 3]
    assert stats.bad_lines[0].reason.startswith("not JSON")
    assert stats.bad_lines[1].reason == "not a JSON object but list"
    assert stats.records == 2


def test_binary_garbage_costs_its_lines_only(tmp_path: Path) -> None:
    garbage = bytes(range(256)) * 4 + b"\n\xff\xfe\x00\x01\n"
    path = write(tmp_path, garbage + line(user("u1", "still here")))
    events, stats = parse(path)
    assert [e["payload"]["text"] for e in events if e["kind"] == "message"] == ["still here"]
    assert len(stats.bad_lines) >= 2
    assert all(b.path == str(path) for b in stats.bad_lines)


def test_a_line_that_is_not_utf8_is_reported_as_such(tmp_path: Path) -> None:
    path = write(tmp_path, b'{"type": "user", "text": "\xe9t\xe9"}\n')
    events, stats = parse(path)
    assert events == []
    assert [(b.line, b.reason) for b in stats.bad_lines] == [(1, "not UTF-8 text")]


def test_an_empty_file_yields_nothing(tmp_path: Path) -> None:
    events, stats = parse(write(tmp_path, b""))
    assert (events, stats.records, stats.bad_lines) == ([], 0, [])
    events, stats = parse(write(tmp_path, b"\n\n  \n", "blank.jsonl"))
    assert (events, stats.records, stats.bad_lines) == ([], 0, [])


def test_an_unknown_record_type_is_kept_raw_and_counted(tmp_path: Path) -> None:
    odd = {"type": "hologram", "sessionId": SESSION, "beam": [1, 2]}
    path = write(tmp_path, line(odd) + line(odd) + line({"no": "type", "sessionId": SESSION}))
    events, stats = parse(path)
    raw = [e for e in events if e["kind"] == "raw"]
    assert [e["payload"] for e in raw[:2]] == [{"type": "hologram", "record": odd}] * 2
    assert raw[2]["payload"]["type"] is None
    assert stats.unknown_types == Counter({"hologram": 2, "None": 1})
    assert len({e["key"] for e in raw}) == 3  # identical lines on different lines are different facts


def test_usage_keeps_the_largest_output_per_response_and_skips_synthetic(tmp_path: Path) -> None:
    records = [
        assistant("a1", "msg_1", 5, {"type": "thinking", "thinking": "", "signature": "s"}),
        assistant("a2", "msg_1", 40, {"type": "text", "text": "hi"}),
        assistant("a3", "msg_1", 12, {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"c": 1}}),
        user("u1", "", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]}),
        assistant("a4", "msg_2", 7, {"type": "text", "text": "done"}),
        assistant("a5", "msg_3", 0, {"type": "text", "text": "No response requested."}, model="<synthetic>"),
        assistant("a6", "msg_4", 9, {"type": "text", "text": "API Error"}, isApiErrorMessage=True),
    ]
    events, stats = parse(write(tmp_path, b"".join(line(r) for r in records)))
    usage = [e for e in events if e["kind"] == "usage"]
    assert [(e["key"], e["payload"]["output_tokens"]) for e in usage] == [
        ("usage:msg_1:req_msg_1", 40),
        ("usage:msg_2:req_msg_2", 7),
    ]
    assert usage[0]["payload"]["context_tokens"] == 1103
    assert stats.duplicates_skipped == 2
    thinking = next(e for e in events if e["kind"] == "thinking")
    assert thinking["payload"] == {"text": "", "signature": "s", "hidden": True}
    result = next(e for e in events if e["kind"] == "tool.result")
    assert result["payload"] == {"tool_use_id": "toolu_1", "output": "", "is_error": False}


def test_lines_before_the_session_is_named_join_it(tmp_path: Path) -> None:
    title = {"type": "summary", "summary": "Fixing the login", "leafUuid": "u9"}
    path = write(tmp_path, line(title) + line(user("u1", "hello", cwd="/w", version="1.0.70")), "renamed.jsonl")
    events, _ = parse(path)
    assert [(e["kind"], e["session"], e["key"]) for e in events] == [
        ("session.title", SESSION, "title:u9"),
        ("session.meta", SESSION, "meta:u1"),
        ("message", SESSION, "u1:0"),
    ]
    assert events[1]["payload"] == {"source": "claude-code", "cwd": "/w", "git_branch": None, "version": "1.0.70"}


def test_a_file_that_never_names_its_session_uses_its_stem(tmp_path: Path) -> None:
    folder = tmp_path / "sess-1" / "subagents"
    folder.mkdir(parents=True)
    record = {"type": "user", "uuid": "u1", "isSidechain": True, "message": {"role": "user", "content": "go"}}
    main_events, _ = parse(write(tmp_path, line(record), "sess-1.jsonl"))
    agent_events, _ = parse(write(folder, line(record), "agent-x1.jsonl"))
    assert [(e["session"], e["agent"]) for e in main_events] == [("sess-1", "sidechain-u1")]
    assert [(e["session"], e["agent"]) for e in agent_events] == [("sess-1", "x1")]


def test_bad_timestamps_and_ids_are_left_out_not_passed_on(tmp_path: Path) -> None:
    record = user("u\x00bad", "hi", timestamp="yesterday", sessionId="")
    path = write(tmp_path, line(record))
    events, stats = parse(path)
    (event,) = events
    # No readable time: the file's modification time stands in (an upper bound, never "now").
    assert event["ts"] == format_ts(path.stat().st_mtime_ns // 1000)
    assert stats.borrowed_timestamps == 1
    assert event["session"] == SESSION  # the file stem
    assert event["key"].startswith("main@1#")
    parse_new_event(event)


def test_parsing_is_lazy(tmp_path: Path) -> None:
    path = write(tmp_path, line(user("u1", "first")) + b"x" * 1000 + b"\n")
    stats = ParseStats()
    events = parse_claude_code(path, stats)
    assert next(events)["payload"]["text"] == "first"
    assert stats.bad_lines == []  # the second line is not read yet


def test_reimporting_through_the_daemon_adds_nothing(daemon: Any) -> None:
    path = claude_fixture("marot__tool_heavy.jsonl")
    events, _ = parse(path)
    with daemon.client() as client:
        first = client.append(events)
        again = client.append(parse(path)[0])
    assert all(r["created"] for r in first)
    assert not any(r["created"] for r in again)
    assert [r["id"] for r in first] == [r["id"] for r in again]


def test_usage_of_a_file_that_never_names_its_session_still_gets_one(tmp_path: Path) -> None:
    record = assistant("a1", "msg_1", 5, {"type": "text", "text": "hi"})
    del record["sessionId"]
    events, _ = parse(write(tmp_path, line(record), "sess-2.jsonl"))
    assert [(e["kind"], e["session"]) for e in events] == [("message", "sess-2"), ("usage", "sess-2")]


def test_an_overlong_line_is_skipped_without_reading_it_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines, "MAX_LINE_BYTES", 300)
    path = write(tmp_path, b"x" * 1000 + b"\n" + line(user("u1", "after")) + b"y" * 700)
    events, stats = parse(path)
    assert [e["payload"]["text"] for e in events if e["kind"] == "message"] == ["after"]
    assert [(b.line, b.reason) for b in stats.bad_lines] == [
        (1, "line longer than 300 bytes"),
        (3, "line longer than 300 bytes"),
    ]


def test_records_without_a_time_take_the_one_before_them(tmp_path: Path) -> None:
    first = user("u1", "hi", timestamp="2026-01-02T03:04:05.000Z")
    title = {"type": "summary", "summary": "A title", "leafUuid": "u1"}
    events, stats = parse(write(tmp_path, line(first) + line(title)))
    assert [e["ts"] for e in events if e["kind"] in ("message", "session.title")] == [
        "2026-01-02T03:04:05.000Z",
        "2026-01-02T03:04:05.000Z",
    ]
    assert stats.borrowed_timestamps == 1


def test_each_inline_sidechain_is_the_agent_of_its_task_call() -> None:
    """1.0.x wrote subagents inline: one agent per Task call, not one "sidechain" for all."""
    path = claude_fixture("kesslerio__logs__chat.816b68a.c7428042-d9a9-4e9e-a71c-4433a8d202c0.jsonl")
    records = list(records_of(path))
    tasks = [
        block["id"]
        for record in records
        if record.get("type") == "assistant" and not record.get("isSidechain")
        for block in record["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == "Task"
    ]
    events, _ = parse(path)
    sidechains = list(dict.fromkeys(e["agent"] for e in events if e["agent"] != "main"))
    assert len(tasks) == 7 and len(sidechains) == 7
    # Each starts with its Task call's prompt, and usage never jumps between two of them.
    first_message = {}
    for event in events:
        if event["agent"] != "main" and event["kind"] == "message":
            first_message.setdefault(event["agent"], event["payload"]["text"])
    prompts = [
        block["input"]["prompt"]
        for record in records
        if record.get("type") == "assistant" and not record.get("isSidechain")
        for block in record["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == "Task"
    ]
    assert sorted(first_message.values()) == sorted(prompts)


def test_records_before_the_first_time_take_the_next_records_not_the_files(tmp_path: Path) -> None:
    """A snapshot holds its own time; a title before any time takes the first record's."""
    snapshot = {
        "type": "file-history-snapshot",
        "messageId": "m1",
        "snapshot": {"messageId": "m1", "trackedFileBackups": {}, "timestamp": "2026-02-03T10:00:00.000Z"},
    }
    title = {"type": "summary", "summary": "Fixing the login", "leafUuid": "u9"}
    first = user("u1", "hello") | {"timestamp": "2026-02-03T10:00:05.000Z"}
    path = write(tmp_path, line(title) + line(snapshot) + line(first), "timed.jsonl")
    os.utime(path, (2_000_000_000, 2_000_000_000))  # a copy made in 2033
    events, _ = parse(path)
    assert [(e["kind"], e["ts"]) for e in events] == [
        ("session.title", "2026-02-03T10:00:00.000Z"),  # the next record's time: the snapshot's own
        ("raw", "2026-02-03T10:00:00.000Z"),
        ("message", "2026-02-03T10:00:05.000Z"),
    ]
