"""`toka record`: a payload as argument or on stdin (one object, or JSON lines as a batch)."""

from __future__ import annotations

import json

from cli_support import assert_error, invoke, json_lines, toka


def _events(session: str = "s") -> list[dict]:
    result = invoke("events", session, "--json")
    if result.exit_code == 3:
        return []
    assert result.exit_code == 0, result.stderr
    return json_lines(result.stdout)


def _log_size() -> int:
    return json.loads(invoke("stats", "--json").stdout)["events"]


def test_payload_as_argument() -> None:
    result = toka("record", "s", "message", '{"role": "user", "text": "hi"}', "--agent", "main")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("recorded 1 event, seq 1, head ")
    (event,) = _events()
    assert (event["kind"], event["agent"], event["payload"]) == ("message", "main", {"role": "user", "text": "hi"})


def test_payload_from_stdin_one_object() -> None:
    result = invoke("record", "s", "tool.call", input='{"tool": "Read"}\n')
    assert result.exit_code == 0, result.stderr
    assert [e["payload"] for e in _events()] == [{"tool": "Read"}]


def test_payload_from_stdin_with_a_dash() -> None:
    result = toka("record", "s", "tool.call", "-", input='{"tool": "Grep"}')
    assert result.returncode == 0, result.stderr
    assert [e["payload"] for e in _events()] == [{"tool": "Grep"}]


def test_pretty_printed_object_on_stdin_is_one_event() -> None:
    pretty = json.dumps({"tool": "Edit", "input": {"file_path": "a.py", "lines": [1, 2]}}, indent=2)
    assert pretty.count("\n") > 3
    result = invoke("record", "s", "tool.call", "--json", input=pretty + "\n")
    assert result.exit_code == 0, result.stderr
    assert len(json.loads(result.stdout)["events"]) == 1
    assert [e["payload"] for e in _events()] == [{"tool": "Edit", "input": {"file_path": "a.py", "lines": [1, 2]}}]


def test_json_lines_on_stdin_are_a_batch() -> None:
    result = toka("record", "s", "message", input='{"n": 1}\n\n{"n": 2}\n{"n": 3}\n')
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("recorded 3 events, seq 1..3, head ")
    events = _events()
    assert [e["payload"] for e in events] == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert [e["parents"] for e in events[1:]] == [[events[0]["id"]], [events[1]["id"]]]


def test_bad_json_argument_is_a_usage_error_and_stores_nothing() -> None:
    result = toka("record", "s", "message", "{not json")
    assert result.returncode == 2
    assert result.stdout == ""
    error = assert_error(result.stderr, contains="is not JSON")
    assert "nothing was recorded" in error
    assert _log_size() == 0


def test_bad_line_in_a_batch_stores_nothing() -> None:
    result = invoke("record", "s", "message", input='{"n": 1}\n{"n": 2\n{"n": 3}\n')
    assert result.exit_code == 2
    error = assert_error(result.stderr, contains="stdin line 2 is not JSON")
    assert "nothing was recorded" in error
    assert _log_size() == 0


def test_payload_that_is_not_an_object() -> None:
    for payload in ("[1,2]", '"text"', "42", "null"):
        result = invoke("record", "s", "message", payload)
        assert result.exit_code == 2, (payload, result.stderr)
        assert_error(result.stderr, contains="payload must be a JSON object")
    assert _log_size() == 0


def test_batch_with_one_non_object_stores_nothing() -> None:
    result = invoke("record", "s", "message", input='{"n": 1}\n[2]\n')
    assert result.exit_code == 2
    assert_error(result.stderr, contains="payload must be a JSON object")
    assert _log_size() == 0


def test_empty_payload() -> None:
    result = invoke("record", "s", "message", input="")
    assert result.exit_code == 2
    assert_error(result.stderr, contains="stdin is empty")
    assert _log_size() == 0


def test_bad_kind() -> None:
    for kind in ("Bad Kind!", "tool..call", ".x"):
        result = invoke("record", "s", kind, "{}")
        assert result.exit_code == 2, kind
        assert_error(result.stderr, contains="is not a dotted name")
    assert _log_size() == 0


def test_bad_ts() -> None:
    result = invoke("record", "s", "message", "{}", "--ts", "next tuesday")
    assert result.exit_code == 2
    assert_error(result.stderr, contains="cannot read --ts 'next tuesday' as a time")


def test_key_twice_records_once() -> None:
    first = toka("record", "s", "note.decision", '{"text": "use WAL"}', "--key", "d1")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("recorded 1 event, seq 1, head ")
    second = toka("record", "s", "note.decision", '{"text": "use WAL"}', "--key", "d1")
    assert second.returncode == 0, second.stderr
    head = first.stdout.split("head ")[1].strip()
    assert second.stdout == f"recorded 0 events, seq 1, head {head} (1 already recorded)\n"
    assert len(_events()) == 1
    assert _log_size() == 1


def test_key_with_a_batch_is_refused() -> None:
    result = invoke("record", "s", "message", "--key", "k", input='{"n": 1}\n{"n": 2}\n')
    assert result.exit_code == 2
    assert_error(result.stderr, contains="--key names one event")
    assert _log_size() == 0


def test_ts_and_agent_are_kept() -> None:
    result = invoke("record", "s", "usage", '{"input_tokens": 5}', "--ts", "2026-01-31T12:00:00Z", "--agent", "a1")
    assert result.exit_code == 0, result.stderr
    (event,) = _events()
    assert (event["ts"], event["agent"]) == ("2026-01-31T12:00:00.000000Z", "a1")
