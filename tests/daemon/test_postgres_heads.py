"""Two daemons on one PostgreSQL log each sign heads over it with a key of their own, into a heads
file of their own, and each finds a rewrite of what it had signed, whichever daemon appended it
(docs/tamper-evidence.md, "PostgreSQL")."""

from __future__ import annotations

import psycopg
from postgres_daemons import Team


def test_each_daemon_signs_the_shared_log_with_its_own_key_and_finds_it_cut(team: Team, postgres_database: str) -> None:
    a, b = team(postgres_database, "a").start(), team(postgres_database, "b").start()
    with a.client() as client:
        client.call(
            "events.append", events=[{"session": "s", "kind": "message", "payload": {"n": n}} for n in range(10)]
        )
    reports = {}
    for daemon in (a, b):
        with daemon.client() as client:
            reports[daemon.name] = client.call("verify"), client.call("heads.list")
    assert all(report["ok"] and report["heads"]["covered"] == 10 for report, _ in reports.values())
    assert reports["a"][1]["key"] != reports["b"][1]["key"]
    assert all((daemon.home / "heads.postgres.jsonl").exists() for daemon in (a, b))  # each machine's own
    # The database's owner cuts the log to 6 events and makes the database agree with itself.
    with psycopg.connect(postgres_database, autocommit=True) as conn:
        conn.execute("DELETE FROM events WHERE seq > 6")
        conn.execute("UPDATE log_end SET seq = 6, id = (SELECT id FROM events WHERE seq = 6)")
    with a.client() as client:
        client.call("admin.rebuild")

    for daemon in (a, b):
        with daemon.client() as client:
            report = client.call("verify")
        assert not report["ok"], daemon.name
        [problem] = report["problems"]
        assert (problem["seq"], problem["what"]) == (7, "truncated"), daemon.name
