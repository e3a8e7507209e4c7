"""Leaving kinds out: `--kind '!raw'` and `--exclude-kind` wherever `--kind` is taken, and a text
replay that hides raw records unless asked (`--all`), saying how many it left out, while
`replay --json` stays the whole stream unless a filter is given (docs/json.md)."""

from __future__ import annotations

from cli_support import assert_error, invoke, invoke_json, json_lines, toka

from daemon.client.sync import Client

SESSION = "kind-filters"


def record_a_session() -> None:
    """A message, a tool call and its result, two raw records, a usage, in that order."""
    events = [
        ("message", {"role": "user", "text": "find the slow query"}),
        ("raw", {"type": "progress", "record": {"type": "progress", "data": {"type": "hook_progress"}}}),
        ("tool.call", {"tool": "Bash", "input": {"command": "grep -r SELECT src"}, "tool_use_id": "t1"}),
        ("raw", {"type": "file-history-snapshot", "record": {"type": "file-history-snapshot"}}),
        ("tool.result", {"tool_use_id": "t1", "output": "src/db.py: SELECT *", "is_error": False}),
        ("usage", {"input_tokens": 157, "cache_read_tokens": 27_000, "output_tokens": 12}),
    ]
    with Client() as client:
        client.append([{"session": SESSION, "agent": "main", "kind": k, "payload": p} for k, p in events])


def test_text_replay_hides_raw_records_and_says_how_many(toka_home: object) -> None:
    record_a_session()
    result = toka("replay", SESSION)
    assert result.returncode == 0
    assert "raw" not in result.stdout and "progress" not in result.stdout
    assert "Bash: grep -r SELECT src" in result.stdout
    assert "in 157 · cache 27k · out 12" in result.stdout
    assert "2 raw records left out (toka replay --all shows them)" in result.stderr


def test_replay_all_shows_raw_records_with_their_gist(toka_home: object) -> None:
    record_a_session()
    result = toka("replay", SESSION, "--all")
    assert "raw progress: hook_progress" in result.stdout
    assert "raw file-history-snapshot" in result.stdout
    assert "left out" not in result.stderr


def test_replay_json_is_the_whole_stream_unless_filtered(toka_home: object) -> None:
    record_a_session()
    every = json_lines(toka("replay", SESSION, "--json").stdout)
    assert [e["kind"] for e in every].count("raw") == 2 and len(every) == 6
    filtered = json_lines(toka("replay", SESSION, "--json", "--kind", "!raw").stdout)
    assert [e["kind"] for e in filtered] == ["message", "tool.call", "tool.result", "usage"]
    excluded = json_lines(toka("replay", SESSION, "--json", "--exclude-kind", "raw", "--exclude-kind", "tool.*").stdout)
    assert [e["kind"] for e in excluded] == ["message", "usage"]


def test_events_and_search_leave_kinds_out(toka_home: object) -> None:
    record_a_session()
    listed = json_lines(invoke("events", SESSION, "--json", "--kind", "!raw", "--kind", "!usage").stdout)
    assert [e["kind"] for e in listed] == ["message", "tool.call", "tool.result"]
    listed = json_lines(invoke("events", SESSION, "--json", "--kind", "tool.*", "--exclude-kind", "tool.result").stdout)
    assert [e["kind"] for e in listed] == ["tool.call"]
    hits = invoke_json("search", "SELECT", "--exclude-kind", "tool.result")["hits"]
    assert {hit["kind"] for hit in hits} == {"tool.call"}


def test_a_kind_filter_that_names_no_kind_is_a_usage_error(toka_home: object) -> None:
    result = invoke("events", SESSION, "--kind", "!")
    assert result.exit_code == 2
    assert_error(result.stderr, contains="--kind '!' names no kind")
