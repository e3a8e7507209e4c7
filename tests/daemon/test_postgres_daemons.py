"""Two daemons, each in a home of its own, on one PostgreSQL log: what either appends is in one
chain per session with dense seqs, and reaches the other's subscribers and followers."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from typing import Any

from postgres_daemons import TOKA, PgDaemon, Subscriber, Team, Writers, chain_problems, doubled, log_rows

THREADS = 4  # client threads per daemon
APPENDS = 30  # appends per thread, of 1 to 3 events each


def append_from(daemon: PgDaemon, thread: int, acked: list[str], problems: list[str]) -> None:
    """APPENDS appends by one client; threads 0 and 1 of both daemons share the session "shared",
    the others write to a session of their own and to "shared" in turn."""
    try:
        with daemon.client() as client:
            for n in range(APPENDS):
                session = "shared" if thread < 2 or n % 2 else f"{daemon.name}-{thread}"
                keys = [f"{daemon.name}-{thread}-{n}-{i}" for i in range(1 + n % 3)]
                batch = [{"kind": "tool.call", "payload": {"key": key}, "key": key} for key in keys]
                answered = client.append(batch, session=session)
                assert all(event["created"] for event in answered), answered
                acked.extend(keys)
    except Exception as exc:  # noqa: BLE001 - reported by the test
        problems.append(f"{daemon.name}-{thread}: {exc!r}")


def test_two_daemons_append_concurrently_into_one_chain_per_session(team: Team, postgres_database: str) -> None:
    a, b = team(postgres_database, "a").start(), team(postgres_database, "b").start()
    subscribers = [Subscriber(a), Subscriber(b)]
    acked: list[str] = []
    problems: list[str] = []
    threads = [
        threading.Thread(target=append_from, args=(daemon, n, acked, problems))
        for daemon in (a, b)
        for n in range(THREADS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not problems
    expected = 2 * THREADS * sum(1 + n % 3 for n in range(APPENDS))
    assert len(acked) == expected

    rows = log_rows(postgres_database)
    assert len(rows) == expected  # nothing lost, nothing written twice
    assert sorted(row.key for row in rows if row.key) == sorted(acked) and not doubled([r.key for r in rows])
    assert {row.session for row in rows} == {"shared"} | {f"{d}-{n}" for d in "ab" for n in range(2, THREADS)}
    assert chain_problems(rows) == []  # seqs 1..N, each event's parent the previous of its session

    for daemon in (a, b):
        verified = daemon.toka("verify")
        assert verified.returncode == 0, verified.stderr
        assert verified.stdout.startswith(f"ok: {expected} events"), verified.stdout
        assert daemon.status()["events"] == expected

    # A last event from b: once both subscribers have it, each has had everything before it.
    with b.client() as client:
        end = client.record("end", "end", {})
    assert end["seq"] == expected + 1
    for subscriber in subscribers:
        subscriber.wait_for_seq(end["seq"])
        assert subscriber.seqs() == list(range(1, expected + 2)), subscriber.daemon.name  # each once, in order
        assert [event["id"] for event in subscriber.events[:-1]] == [row.id for row in rows]


def _lines(stream: Any) -> queue.Queue[str]:
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def test_events_follow_on_one_daemon_shows_what_the_other_appends(team: Team, postgres_database: str) -> None:
    a, b = team(postgres_database, "a").start(), team(postgres_database, "b").start()
    with b.client() as client:
        first = client.record("s", "message", {"n": 0})
    follower = subprocess.Popen(
        [str(TOKA), "events", "s", "--follow", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **a.env},
    )
    try:
        lines = _lines(follower.stdout)
        assert json.loads(lines.get(timeout=15))["id"] == first["id"]
        appended = [first]
        with a.client() as on_a, b.client() as on_b:
            for n, client in enumerate([on_b, on_b, on_a, on_b], 1):
                appended.append(client.record("s", "message", {"n": n}))
                client.record("elsewhere", "message", {"n": n})  # another session: not shown
        shown = [json.loads(lines.get(timeout=15)) for _ in appended[1:]]
        assert [event["id"] for event in shown] == [event["id"] for event in appended[1:]]
        assert [event["payload"] for event in shown] == [{"n": n} for n in range(1, 5)]
        assert [event["parents"] for event in shown] == [[event["id"]] for event in appended[:-1]]
        assert follower.poll() is None and lines.empty()
    finally:
        follower.terminate()
        follower.wait(10)


def test_amended_usage_between_the_other_daemons_commits_reaches_subscribers_in_order(
    team: Team, postgres_database: str
) -> None:
    """A response reported again with more output is held under its key and amended by a second
    append (daemon/agents/usage.py output_revisions): the other daemon's commits can fall between
    the two, and must still reach this daemon's subscribers, in order."""
    a, b = team(postgres_database, "a").start(), team(postgres_database, "b").start()
    subscriber = Subscriber(a)
    writers = Writers([b], per_daemon=2, session="other")
    writers.wait_for(10)
    with a.client() as client:
        for n in range(20):
            usage = {"kind": "usage", "key": f"usage:msg-{n}", "agent": "main"}
            client.append([{**usage, "payload": {"message_id": f"msg-{n}", "output_tokens": 10}}], session="u")
            grown = {**usage, "payload": {"message_id": f"msg-{n}", "output_tokens": 25}}
            answered = client.append([{"kind": "message", "payload": {"n": n}}, grown], session="u")
            assert [event["created"] for event in answered] == [True, False]
    writers.stop()
    with b.client() as client:
        end = client.record("end", "end", {})
    subscriber.wait_for_seq(end["seq"])
    assert subscriber.seqs() == list(range(1, end["seq"] + 1))  # none skipped, none twice
    rows = log_rows(postgres_database)
    assert len([row for row in rows if row.key and row.key.endswith(":+25")]) == 20  # each amended once
    assert chain_problems(rows) == []
