"""`toka events`: filters (kind, time, limit), prefixes, errors, and --follow in a real process."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from datetime import UTC, datetime, timedelta

import pytest
from cli_support import TOKA, assert_error, invoke, json_lines, seqs, stderr_lines, toka


def _seqs(*args: str) -> list[int]:
    result = invoke("events", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return seqs(json_lines(result.stdout))


def test_all_events_in_order(example: str) -> None:
    assert _seqs(example) == list(range(1, 24))


def test_kind_exact(example: str) -> None:
    assert _seqs(example, "--kind", "message") == [1, 2, 17, 23]
    assert _seqs(example, "-k", "usage", "-k", "note.decision") == [7, 8, 16, 22]


def test_kind_family(example: str) -> None:
    result = invoke("events", example, "--kind", "tool.*", "--json")
    events = json_lines(result.stdout)
    assert len(events) == 14
    assert {e["kind"] for e in events} == {"tool.call", "tool.result"}
    assert _seqs(example, "--kind", "note.*") == [8, 9]


def test_since_and_until_iso(example: str) -> None:
    assert _seqs(example, "--since", "2026-03-14T09:32:00Z") == [18, 19, 20, 21, 22, 23]
    assert _seqs(example, "--until", "2026-03-14T09:30:30Z") == [1, 2, 3, 4, 5]
    # until is exclusive, since inclusive: event 2 is at 09:30:07.423456
    assert _seqs(example, "--since", "2026-03-14T09:30:07.423456Z", "--until", "2026-03-14T09:30:22.023456Z") == [2, 3]


def test_since_and_until_as_ages() -> None:
    now = datetime.now(UTC)
    for age, text in ((timedelta(hours=3), "old"), (timedelta(minutes=30), "recent"), (timedelta(0), "now")):
        ts = (now - age).isoformat().replace("+00:00", "Z")
        assert invoke("record", "s", "message", json.dumps({"text": text}), "--ts", ts).exit_code == 0
    assert _seqs("s", "--since", "1h") == [2, 3]
    assert _seqs("s", "--until", "1h") == [1]
    assert _seqs("s", "--since", "2d", "--until", "10m") == [1, 2]
    assert _seqs("s", "--since", "1w") == [1, 2, 3]


def test_bad_time_is_a_usage_error(example: str) -> None:
    result = invoke("events", example, "--since", "next tuesday")
    assert result.exit_code == 2
    assert_error(result.stderr, contains="cannot read --since 'next tuesday' as a time")


def test_limit_and_last(example: str) -> None:
    assert _seqs(example, "--limit", "3") == [1, 2, 3]
    assert _seqs(example, "-n", "3", "--last") == [21, 22, 23]
    assert _seqs(example, "--kind", "tool.*", "-n", "2", "--last") == [20, 21]
    assert _seqs(example, "-n", "100") == list(range(1, 24))


def test_limit_must_be_positive(example: str) -> None:
    result = invoke("events", example, "--limit", "0")
    assert result.exit_code == 2


def test_prefix_names_the_session(example: str) -> None:
    assert _seqs("fix-login") == list(range(1, 24))


def test_unknown_session_is_not_found(example: str) -> None:
    result = toka("events", "no-such-session")
    assert result.returncode == 3
    assert result.stdout == ""
    assert_error(result.stderr, contains="no session matches 'no-such-session'")


def test_ambiguous_prefix_is_a_usage_error() -> None:
    for session in ("run-a", "run-b"):
        assert invoke("record", session, "message", "{}").exit_code == 0
    result = invoke("events", "run")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert_error(result.stderr, contains="ambiguous")
    assert stderr_lines(result.stderr)[1] == "hint: it could be run-a or run-b; give more of the name"
    assert _seqs("run-b") == [2]


def test_table_output_is_one_line_per_event(example: str) -> None:
    result = toka("events", example, "-n", "2")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].split()[:5] == ["1", "2026-03-14", "09:30:00", "main", "message"]
    assert "Login requests time out" in lines[0]


def _reader(stream: object) -> queue.Queue[str]:
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:  # type: ignore[attr-defined]
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return lines


@pytest.mark.timeout(60)
def test_follow_prints_existing_then_new_events() -> None:
    for n in (1, 2):
        assert invoke("record", "s", "message", json.dumps({"n": n})).exit_code == 0
    follower = subprocess.Popen(
        [str(TOKA), "events", "s", "--follow", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        lines = _reader(follower.stdout)
        existing = [json.loads(lines.get(timeout=10)) for _ in range(2)]
        assert [e["payload"] for e in existing] == [{"n": 1}, {"n": 2}]

        # Another command, another process, records while the follower waits.
        assert toka("record", "s", "message", '{"n": 3}').returncode == 0
        assert toka("record", "other", "message", '{"n": 99}').returncode == 0  # another session
        new = json.loads(lines.get(timeout=5))
        assert (new["seq"], new["payload"]) == (3, {"n": 3})
        assert new["parents"] == [existing[1]["id"]]
        assert invoke("record", "s", "message", '{"n": 4}').exit_code == 0
        assert json.loads(lines.get(timeout=5))["payload"] == {"n": 4}
        assert lines.empty()
        assert follower.poll() is None  # still following
    finally:
        follower.terminate()
        follower.wait(10)


def test_text_output_drops_the_terminal_controls_a_payload_holds() -> None:
    """A payload cannot move the cursor or retitle the terminal of someone reading a replay."""
    hostile = {"role": "user", "text": "hello \x1b]0;pwned\x07 \x1b[2J world \x9b"}
    assert invoke("record", "hostile", "message", json.dumps(hostile)).exit_code == 0
    for args in (("replay", "hostile"), ("events", "hostile")):
        result = toka(*args)
        assert result.returncode == 0
        assert "\x1b" not in result.stdout and "\x07" not in result.stdout, args
        assert "hello ]0;pwned [2J world" in result.stdout, args
