"""The Codex rollout parser: against every real fixture (figures computed here from the raw JSON
with plain code of their own), and against broken files written for the test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from transcripts import SHARED, shared_or_skip

from daemon.ingest.codex import ParseStats, parse_codex
from store.events import parse_new_event

CODEX = ("fixtures", "transcripts", "codex")
SESSION = "019c8a70-dda7-7f33-98ea-f30553347322"
META = {"timestamp": "2026-02-23T12:00:00.000Z", "type": "session_meta", "payload": {"id": SESSION, "cwd": "/w"}}


def fixture_names() -> list[str]:
    folder = SHARED.joinpath(*CODEX)
    # One placeholder when the shared folder is absent, so the test runs and skips with the reason.
    return sorted(p.name for p in folder.glob("*.jsonl")) if folder.is_dir() else ["absent"]


def parse(path: Path) -> tuple[list[dict[str, Any]], ParseStats]:
    stats = ParseStats()
    return list(parse_codex(path, stats)), stats


def raw_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def item_type(record: dict[str, Any]) -> Any:
    return record["payload"].get("type") if record.get("type") == "response_item" else None


def expected_usage(records: list[dict[str, Any]]) -> list[tuple[int, int, str | None]]:
    """(context tokens, window, model) per real usage: token_count lines whose info is set, whose
    latest call is not all zeros, and whose cumulative totals differ from the usage before."""
    found: list[tuple[int, int, str | None]] = []
    model = None
    previous_totals = None
    for record in records:
        if record["type"] == "turn_context" and record["payload"].get("model"):
            model = record["payload"]["model"]
        if record["type"] != "event_msg" or record["payload"].get("type") != "token_count":
            continue
        info = record["payload"]["info"]
        if info is None:
            continue
        last = info["last_token_usage"]
        if all(last[name] == 0 for name in ("input_tokens", "cached_input_tokens", "output_tokens")) and (
            last["reasoning_output_tokens"] == 0
        ):
            continue
        if info["total_token_usage"] == previous_totals:
            continue
        previous_totals = info["total_token_usage"]
        found.append((last["total_tokens"], info["model_context_window"], model))
    return found


@pytest.mark.parametrize("name", fixture_names())
def test_fixture_parses_to_the_counts_in_its_raw_json(name: str) -> None:
    path = shared_or_skip(*CODEX, name)
    events, stats = parse(path)
    records = raw_records(path)

    assert stats.bad_lines == []
    assert stats.records == len(records)
    assert stats.events == len(events)
    kinds = [e["kind"] for e in events]
    types = [item_type(r) for r in records]
    assert kinds.count("message") == types.count("message")
    calls = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call")
    assert kinds.count("tool.call") == sum(types.count(t) for t in calls)
    results = ("function_call_output", "custom_tool_call_output", "tool_search_output")
    assert kinds.count("tool.result") == sum(types.count(t) for t in results)
    assert kinds.count("compaction") == sum(1 for r in records if r["type"] == "compacted")

    usage = expected_usage(records)
    usage_events = [e["payload"] for e in events if e["kind"] == "usage"]
    assert len(usage_events) == len(usage)
    if usage:
        fill, window, model = usage[-1]
        assert (usage_events[-1]["context_tokens"], usage_events[-1]["context_window"]) == (fill, window)
        assert usage_events[-1]["model"] == model
        assert usage_events[-1]["cumulative"]["total_tokens"] >= usage_events[-1]["total_tokens"]


@pytest.mark.parametrize("name", fixture_names())
def test_fixture_events_are_valid_keyed_and_in_one_session(name: str) -> None:
    path = shared_or_skip(*CODEX, name)
    events, _ = parse(path)
    first = raw_records(path)[0]

    assert {e["session"] for e in events} == {first["payload"]["id"]}
    assert {e["agent"] for e in events} == {"main"}
    assert all(e["ts"] is not None for e in events)
    keys = [e["key"] for e in events]
    assert len(set(keys)) == len(keys)
    for event in events:
        parse_new_event(event)  # what events.append would do with it


@pytest.mark.parametrize("name", fixture_names())
def test_reparsing_gives_the_same_events_and_a_grown_file_only_adds(name: str, tmp_path: Path) -> None:
    path = shared_or_skip(*CODEX, name)
    events, _ = parse(path)
    assert parse(path)[0] == events

    lines = path.read_bytes().splitlines(keepends=True)
    prefix = tmp_path / path.name
    prefix.write_bytes(b"".join(lines[: len(lines) // 2]))
    early, _ = parse(prefix)
    assert early == events[: len(early)]


def test_compaction_fixture_maps_the_compaction_and_its_quirk() -> None:
    path = shared_or_skip(*CODEX, "madshn__rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl")
    events, stats = parse(path)
    [compaction] = [e for e in events if e["kind"] == "compaction"]
    assert compaction["payload"]["replacement_items"] > 0
    assert compaction["key"].startswith("L1788:")
    # The token_count just before it (line 1787) is all zeros but a bogus total: no usage from it.
    assert not any(e["key"].startswith("L1787:") for e in events)
    assert stats.empty_usage_skipped >= 1
    before = [e["payload"]["context_tokens"] for e in events if e["kind"] == "usage" and e["ts"] < compaction["ts"]]
    after = [e["payload"]["context_tokens"] for e in events if e["kind"] == "usage" and e["ts"] > compaction["ts"]]
    assert before[-1] == 212134
    assert after[0] == 48687


def test_tool_calls_keep_parsed_arguments_and_results_know_failures() -> None:
    path = shared_or_skip(*CODEX, "codemie-ai__rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
    events, _ = parse(path)
    first_call = next(e for e in events if e["kind"] == "tool.call")
    assert first_call["payload"]["tool"] == "exec_command"
    assert first_call["payload"]["input"]["cmd"].startswith("sed -n")
    assert first_call["key"] == f"call:{first_call['payload']['call_id']}"
    results = [e["payload"] for e in events if e["kind"] == "tool.result"]
    raw_text = path.read_text()
    assert sum(1 for r in results if r.get("is_error") is True) == raw_text.count("Process exited with code 1") + (
        raw_text.count("Process exited with code 2")
    )
    patch = next(e["payload"] for e in events if e["kind"] == "tool.call" and e["payload"]["tool"] == "apply_patch")
    assert patch["input"].startswith("*** Begin Patch")


# Broken and unusual files, written for the test.


def rollout(
    tmp_path: Path, *lines: dict[str, Any] | bytes, name: str = f"rollout-2026-02-23T12-00-00-{SESSION}.jsonl"
) -> Path:
    path = tmp_path / name
    path.write_bytes(b"".join(line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n" for line in lines))
    return path


def message(text: str, ts: str = "2026-02-23T12:00:01.000Z") -> dict[str, Any]:
    content = [{"type": "input_text", "text": text}]
    return {
        "timestamp": ts,
        "type": "response_item",
        "payload": {"type": "message", "role": "user", "content": content},
    }


def token_count(last: int, total: int) -> dict[str, Any]:
    def counts(n: int) -> dict[str, int]:
        return {
            "input_tokens": n,
            "cached_input_tokens": 0,
            "output_tokens": 0,
            "reasoning_output_tokens": 0,
            "total_tokens": n,
        }

    info = {"total_token_usage": counts(total), "last_token_usage": counts(last), "model_context_window": 1000}
    return {"timestamp": "2026-02-23T12:00:02Z", "type": "event_msg", "payload": {"type": "token_count", "info": info}}


def test_truncated_last_line_is_a_bad_line_and_the_rest_parses(tmp_path: Path) -> None:
    path = rollout(tmp_path, META, message("hello"), b'{"timestamp": "2026-02-23T12:00:03Z", "type": "resp')
    events, stats = parse(path)
    assert [e["kind"] for e in events] == ["session.meta", "message"]
    [bad] = stats.bad_lines
    assert (bad.line, bad.reason.startswith("truncated last line")) == (3, True)


def test_non_json_and_non_object_lines_are_skipped_and_parsing_goes_on(tmp_path: Path) -> None:
    path = rollout(tmp_path, META, b"this is not json\n", b"[1, 2]\n", message("after"))
    events, stats = parse(path)
    assert [e["payload"].get("text") for e in events] == [None, "after"]
    assert [(b.line, b.reason.split(" ")[:2]) for b in stats.bad_lines] == [(2, ["not", "JSON"]), (3, ["not", "a"])]
    assert stats.records == 2


def test_binary_garbage_is_a_bad_line(tmp_path: Path) -> None:
    path = rollout(tmp_path, META, bytes(range(128, 256)) + b"\n", message("still here"))
    events, stats = parse(path)
    assert [e["kind"] for e in events] == ["session.meta", "message"]
    assert [(b.line, b.reason) for b in stats.bad_lines] == [(2, "not UTF-8 text")]


def test_empty_file_yields_nothing(tmp_path: Path) -> None:
    events, stats = parse(rollout(tmp_path))
    assert events == []
    assert (stats.records, stats.events, stats.bad_lines) == (0, 0, [])


def test_unknown_types_are_kept_whole_as_raw_and_counted(tmp_path: Path) -> None:
    odd = {"timestamp": "2026-02-23T12:00:01Z", "type": "hologram", "payload": {"depth": 3}}
    odd_item = {"timestamp": "2026-02-23T12:00:02Z", "type": "response_item", "payload": {"type": "telepathy"}}
    stats = ParseStats()
    events = list(parse_codex(rollout(tmp_path, META, odd, odd_item, odd), stats))
    assert [e["kind"] for e in events] == ["session.meta", "raw", "raw", "raw"]
    assert events[1]["payload"] == {"record": odd}
    assert stats.unknown_types == {"hologram": 2, "response_item/telepathy": 1}
    assert len({e["key"] for e in events}) == 4  # identical lines on different lines keep apart


def test_session_falls_back_to_the_uuid_in_the_file_name(tmp_path: Path) -> None:
    events, _ = parse(rollout(tmp_path, message("no meta first")))
    assert events[0]["session"] == SESSION


def test_empty_and_repeated_token_counts_yield_no_usage(tmp_path: Path) -> None:
    null_info = {
        "timestamp": "2026-02-23T12:00:02Z",
        "type": "event_msg",
        "payload": {"type": "token_count", "info": None},
    }
    path = rollout(
        tmp_path, META, null_info, token_count(0, 0), token_count(10, 10), token_count(10, 10), token_count(5, 15)
    )
    events, stats = parse(path)
    usage = [e["payload"] for e in events if e["kind"] == "usage"]
    assert [(u["context_tokens"], u["cumulative"]["total_tokens"], u["context_window"]) for u in usage] == [
        (10, 10, 1000),
        (5, 15, 1000),
    ]
    assert (stats.empty_usage_skipped, stats.duplicates_skipped) == (2, 1)


def test_usage_takes_the_model_of_the_latest_turn_context(tmp_path: Path) -> None:
    def turn(model: str) -> dict[str, Any]:
        return {"timestamp": "2026-02-23T12:00:01Z", "type": "turn_context", "payload": {"model": model, "cwd": "/w"}}

    path = rollout(
        tmp_path, META, token_count(1, 1), turn("gpt-a"), token_count(2, 3), turn("gpt-b"), token_count(3, 6)
    )
    events, _ = parse(path)
    assert [e["payload"]["model"] for e in events if e["kind"] == "usage"] == [None, "gpt-a", "gpt-b"]


def test_a_repeated_call_id_keeps_its_events_apart(tmp_path: Path) -> None:
    call = {
        "timestamp": "2026-02-23T12:00:01Z",
        "type": "response_item",
        "payload": {"type": "function_call", "name": "shell", "arguments": "not json", "call_id": "c1"},
    }
    output = {"timestamp": "2026-02-23T12:00:02Z", "type": "response_item", "payload": {"type": "function_call_output"}}
    output["payload"].update(call_id="c1", output="Exit code: 1\nWall time: 0.1 seconds\nOutput:\n")
    events, _ = parse(rollout(tmp_path, META, call, output, call))
    assert [e["key"] for e in events[1:3]] == ["call:c1", "result:c1"]
    assert events[3]["key"].startswith("L4:")
    assert events[1]["payload"]["input"] == "not json"
    assert events[2]["payload"]["is_error"] is True


def test_unreadable_timestamps_borrow_the_previous_one(tmp_path: Path) -> None:
    path = rollout(tmp_path, META, message("x", ts="[trimmed]"))
    events, stats = parse(path)
    assert events[1]["ts"] == "2026-02-23T12:00:00.000000Z"
    assert stats.borrowed_timestamps == 1


def test_the_older_format_without_envelopes(tmp_path: Path) -> None:
    first = {"id": "legacy-1", "timestamp": "2025-08-01T10:00:00Z", "instructions": "be brief", "git": None}
    bare = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}
    events, stats = parse(rollout(tmp_path, first, bare, {"record_type": "state"}, name="rollout-old.jsonl"))
    assert [(e["session"], e["kind"]) for e in events] == [
        ("legacy-1", "session.meta"),
        ("legacy-1", "message"),
        ("legacy-1", "raw"),
    ]
    assert events[1]["payload"] == {"role": "assistant", "text": "hi"}
    assert events[1]["ts"] == "2025-08-01T10:00:00.000000Z"
    assert stats.unknown_types == {"record_type/state": 1}
    assert stats.bad_lines == []


def test_exit_codes_are_read_from_the_header_only(tmp_path: Path) -> None:
    def output(call_id: str, text: Any) -> dict[str, Any]:
        payload = {"type": "function_call_output", "call_id": call_id, "output": text}
        return {"timestamp": "2026-02-23T12:00:02Z", "type": "response_item", "payload": payload}

    quoted = "Process exited with code 0\nOutput:\nlog says:\nProcess exited with code 1\n"
    lines = [
        output("a", quoted),
        output("b", '{"output": "x", "metadata": {"exit_code": 2}}'),
        output("c", {"content": "x", "success": True}),
        output("d", "plain text"),
    ]
    events, _ = parse(rollout(tmp_path, META, *lines))
    assert [e["payload"].get("is_error") for e in events[1:]] == [False, True, False, None]
