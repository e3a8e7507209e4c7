"""Faults under daemons on a PostgreSQL log: terminated connections and a killed daemon (the
server going away is in test_postgres_outages.py). Nothing acknowledged is lost and nothing is
written twice: counted by distinct keys and by rows."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable

import psycopg
from daemon_support import PATIENCE
from postgres_daemons import PgDaemon, Team, Writers, assert_once, chain_problems, log_rows

from store.events import NewEvent, parse_new_event
from store.postgres.store import PostgresStore

TERMINATE = """SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
    WHERE datname = current_database() AND application_name LIKE 'toka %'"""
ACTIVE_WRITERS = " AND application_name = 'toka writer' AND state = 'active'"


def test_terminated_connections_lose_and_double_nothing(team: Team, postgres_database: str) -> None:
    a, b = team(postgres_database, "a").start(), team(postgres_database, "b").start()
    writers = Writers([a, b], per_daemon=3)
    terminated = []
    with psycopg.connect(postgres_database, autocommit=True) as admin:
        for round_ in range(12):
            writers.wait_for(20)  # appends are streaming in
            # Every connection of both daemons, or the writers in the middle of a statement.
            row = admin.execute(TERMINATE + ("" if round_ % 2 else ACTIVE_WRITERS)).fetchone()
            terminated.append(row[0] if row else 0)
    writers.stop()
    # Up to six each time: the writer, reader and listener of both daemons, less any not reopened yet.
    assert all(terminated[1::2]) and sum(terminated) >= 24, terminated
    assert writers.failed == []  # the daemons retried on new connections
    total = assert_once(postgres_database, writers.acked)
    assert total == len(writers.acked)
    for daemon in (a, b):
        assert daemon.connection()["outages"] >= 1 and daemon.connection()["reachable"]


def test_a_daemon_killed_in_the_middle_of_its_groups_loses_nothing_acknowledged(
    team: Team, postgres_database: str
) -> None:
    a, b = team(postgres_database, "a").start(), team(postgres_database, "b").start()
    on_a = Writers([a], per_daemon=8, batch=4)  # many appends in flight: groups of several
    on_b = Writers([b], per_daemon=2)
    on_a.wait_for(200)
    on_b.wait_for(20)
    a.process.send_signal(signal.SIGKILL)
    a.process.wait(PATIENCE)
    on_a.stop()
    assert len(on_a.sent) > len(on_a.acked)  # appends were in flight when it died
    # Its writers were told the daemon is gone: the connection closed, or (a writer that tried
    # again before it was stopped) nothing listens any more. Nothing else.
    gone = (": DaemonUnavailable: ", ": DaemonNotRunning: ")
    assert [failure for failure in on_a.failed if not any(word in failure for word in gone)] == []

    on_b.wait_for(20)  # the other daemon goes on: the dead one's transaction did not keep the lock
    a.start()
    with a.client() as client:
        after = client.record("s", "after.restart", {}, key="a-after")
    on_b.wait_for(20)
    on_b.stop()
    assert on_b.failed == []
    total = assert_once(postgres_database, [*on_a.acked, *on_b.acked, "a-after"])
    assert total >= len(on_a.acked) + len(on_b.acked) + 1 and after["seq"] <= total
    for daemon in (a, b):
        verified = daemon.toka("verify")
        assert verified.returncode == 0 and verified.stdout.startswith(f"ok: {total} events"), verified


IN_FLIGHT = """SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database()
    AND application_name = 'toka writer' AND state = 'active' AND query LIKE 'INSERT INTO%'"""
COMMITTED = "SELECT 1 FROM events WHERE key = %s"
AT_ONCE_IN_FLIGHT = """SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database()
    AND application_name = 'toka writer' AND state = 'active' AND query LIKE 'SELECT toka_append(%'"""


def test_a_writer_terminated_during_its_inserts_is_answered_once(team: Team, postgres_database: str) -> None:
    """The backend ends while a big append's inserts are in flight: the daemon retries it on a new
    connection with the same token, and the batch is there once."""
    a, b = team(postgres_database, "a").start(), team(postgres_database, "b").start()
    with b.client(timeout=60) as other:
        # Another daemon's append before each batch moves the log's end from where a left it, so a's
        # batch is written by its inserts under the lock (the one-statement append writes nothing).
        _terminated_once(a, postgres_database, IN_FLIGHT, lambda n: other.record("s", "other", {}, key=f"other-{n}"))


def test_a_writer_terminated_during_its_one_statement_append_is_answered_once(
    team: Team, postgres_database: str
) -> None:
    """The same, once the daemon knows the log's end and sends its appends as one statement."""
    _terminated_once(team(postgres_database, "a").start(), postgres_database, AT_ONCE_IN_FLIGHT, lambda n: None)


def _terminated_once(a: PgDaemon, database: str, in_flight: str, before: Callable[[int], object]) -> None:
    """Batches of 3,000 appended through ``a``, ``before(attempt)`` ahead of each, until one is
    caught in flight (``in_flight`` terminates the writer's connection while the statement it
    names runs): each batch is answered created once, and the log holds every batch once."""
    keys: list[str] = []
    with psycopg.connect(database, autocommit=True) as admin, a.client(timeout=60) as client:
        client.record("s", "before", {}, key="before")  # the log's end, known from this append on
        keys.append("before")
        for attempt in range(5):  # a batch may commit before the test sees it: then another
            before(attempt)
            batch = [
                {"kind": "tool.call", "payload": {"text": "x" * 200}, "key": f"{attempt}-{n}"} for n in range(3000)
            ]
            request = client.submit("events.append", events=batch, session="s")
            hit = 0
            while not hit:
                row = admin.execute(in_flight).fetchone()
                hit = row[0] if row else 0
                if admin.execute(COMMITTED, [f"{attempt}-2999"]).fetchone():
                    break
            answered = client.result(request)["events"]
            assert [event["created"] for event in answered] == [True] * 3000
            keys += [f"{attempt}-{n}" for n in range(3000)]
            if hit:
                break
        assert hit, "no append was seen in flight"
        after = client.record("s", "after", {}, key="after")
    every = log_rows(database)
    assert [row.key for row in every if not (row.key or "").startswith("other-")] == [*keys, "after"]
    assert after["seq"] == len(every) and chain_problems(every) == []
    assert a.connection()["reachable"]


def test_a_connection_left_in_an_aborted_pipeline_is_replaced(postgres_database: str) -> None:
    """What a backend terminated mid-pipeline can leave: a connection neither broken nor closed
    that refuses every statement ("cannot exit pipeline mode while busy"). The store must open a
    new one rather than fail every later append. (The test puts the writer's connection in that
    state itself: the termination does it only now and then.)"""

    async def run() -> list[int]:
        store = await PostgresStore.open(postgres_database)
        try:
            seqs = [(await store.append([_event(0)]))[0].event.seq]
            conn = await store._writer.get()
            conn.pgconn.enter_pipeline_mode()
            conn.pgconn.send_query_params(b"SELECT 1", None)  # a result left unread, as after the error
            for n in (1, 2):
                seqs.append((await store.append([_event(n)]))[0].event.seq)
            return seqs
        finally:
            await store.close()

    assert asyncio.run(run()) == [1, 2, 3]


def _event(n: int) -> NewEvent:
    return parse_new_event({"session": "s", "kind": "k", "payload": {"n": n}})
