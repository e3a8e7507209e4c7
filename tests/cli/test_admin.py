"""`toka admin rebuild`: the session tables are projections of the log and come back the same."""

from __future__ import annotations

import json
import sqlite3

from cli_support import home, invoke, toka


def _sessions() -> dict:
    result = invoke("sessions", "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _several_sessions(example: str) -> None:
    for session, agent in (("b-run", "main"), ("a-run", "helper"), ("b-run", "helper")):
        assert invoke("record", session, "tool.call", '{"tool": "Bash"}', "--agent", agent).exit_code == 0
    assert invoke("record", example, "note.decision", '{"text": "late note"}').exit_code == 0


def test_rebuild_gives_the_same_sessions(example: str) -> None:
    _several_sessions(example)
    before = _sessions()
    # most recently active first: the late note is toka's, not the example session's activity
    assert [s["session"] for s in before["sessions"]] == ["b-run", "a-run", example]
    result = invoke("admin", "rebuild")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("rebuilt the projections of 3 sessions and the search index (")
    assert _sessions() == before


def test_rebuild_repairs_lost_projections(example: str) -> None:
    _several_sessions(example)
    before = _sessions()
    assert toka("daemon", "stop").returncode == 0
    with sqlite3.connect(home() / "toka.db") as db:
        # All but the rows of the log's last session, which the daemon compares with the log when
        # it starts (it rebuilds tables that are empty or behind there by itself).
        last = db.execute("SELECT session FROM events ORDER BY seq DESC LIMIT 1").fetchone()[0]
        for table in ("sessions", "session_agents", "session_kinds"):
            db.execute(f"DELETE FROM {table} WHERE session != ?", (last,))
    db.close()
    assert _sessions() != before
    rebuilt = json.loads(invoke("admin", "rebuild", "--json").stdout)
    assert rebuilt["sessions"] == 3 and rebuilt["search_events"] > 0
    assert _sessions() == before
    assert invoke("verify").exit_code == 0


def test_session_tables_left_empty_over_the_log_are_rebuilt_when_the_daemon_starts(example: str) -> None:
    # As a kill between an upgrade's last step and the rebuild after it left them in older tokas:
    # `toka sessions` said "no sessions yet" over the whole log, and the next append started a
    # second chain in its session.
    _several_sessions(example)
    before = _sessions()
    last = json.loads(invoke("events", example, "--json").stdout.splitlines()[-1])
    assert toka("daemon", "stop").returncode == 0
    with sqlite3.connect(home() / "toka.db") as db:
        for table in ("sessions", "session_agents", "session_kinds", "usage_buckets"):
            db.execute(f"DELETE FROM {table}")
    db.close()

    assert _sessions() == before
    assert invoke("record", example, "note.decision", '{"text": "after"}').exit_code == 0
    added = json.loads(invoke("events", example, "--json").stdout.splitlines()[-1])
    assert added["parents"] == [last["id"]]
    assert invoke("verify").exit_code == 0
