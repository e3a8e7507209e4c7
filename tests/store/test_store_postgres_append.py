"""The PostgreSQL append in one statement (``toka_append``, step p012_append_at_once): sent when the
store knows the log's end from its own last append, it costs one round trip; when another store
moved the end, it writes nothing and the append is sealed again on what is read under the lock.
Chain, dense seqs and idempotency records are the same as the two-trip append's. And the notices
of a store's own commits do not wake its own follower."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import tempfile
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import psycopg
import pytest
from psycopg import pq

from store.base import EventQuery
from store.events import Event, NewEvent
from store.postgres import store as postgres_store
from store.postgres.append import LogEnd, append_batch
from store.postgres.schema import APPEND_LOCK
from store.postgres.store import PostgresStore

OpenStore = Callable[[], Awaitable[PostgresStore]]

COUNTS = "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM blobs), (SELECT count(*) FROM append_batches)"


@asynccontextmanager
async def connected(url: str) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        yield conn


async def rows(conn: psycopg.AsyncConnection[Any], sql: str, *params: Any) -> list[tuple[Any, ...]]:
    cursor = await conn.execute(sql, params or None)
    return await cursor.fetchall()


def say(session: str, text: str, key: str | None = None) -> NewEvent:
    return NewEvent(session, "note.user", {"text": text}, "main", key=key)


async def traced_round_trips(conn: psycopg.AsyncConnection[Any], call: Awaitable[Any]) -> tuple[Any, int]:
    """What ``call`` returned, and how many times the connection waited for the server on it: the
    ReadyForQuery answers to its Syncs, read from libpq's trace of the protocol."""
    with tempfile.TemporaryFile("w+") as trace:
        conn.pgconn.trace(trace.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
        try:
            result = await call
        finally:
            conn.pgconn.untrace()
        os.fsync(trace.fileno())
        trace.seek(0)
        lines = trace.read().splitlines()
    flushes = sum(1 for line in lines if line.startswith("F") and "\tFlush" in line)
    return result, sum(1 for line in lines if "\tReadyForQuery" in line) + flushes


def chain_breaks(log: list[Event]) -> list[int]:
    """The seqs of the events not chained onto the previous event of their session."""
    last: dict[str, str] = {}
    breaks = []
    for event in log:
        expected = (last[event.session],) if event.session in last else ()
        if event.parents != expected:
            breaks.append(event.seq)
        last[event.session] = event.id
    return breaks


async def test_an_append_onto_the_end_its_last_append_left_is_one_round_trip(
    open_store: OpenStore, postgres_database: str
) -> None:
    store = await open_store()  # the schema
    end = LogEnd()
    async with connected(postgres_database) as conn:
        first, first_trips = await traced_round_trips(conn, append_batch(conn, [say("s", "one")], "t1", False, end))
        second, second_trips = await traced_round_trips(
            conn, append_batch(conn, [say("s", "two"), say("u", "three")], "t2", False, end)
        )
        third, third_trips = await traced_round_trips(conn, append_batch(conn, [say("s", "four")], "t3", False, end))
        assert await rows(conn, COUNTS) == [(4, 4, 3)]

    assert first_trips > 1  # nothing known of the log yet: read under the lock, then written
    assert (second_trips, third_trips) == (1, 1)
    assert [r.event.seq for r in first + second + third] == [1, 2, 3, 4]
    assert end.next_seq == 5 and end.heads == {"s": third[0].event.id, "u": second[1].event.id}
    log = await store.query(EventQuery())
    assert [e.id for e in log] == [r.event.id for r in first + second + third]
    assert chain_breaks(log) == []
    assert (await store.verify()).ok


async def test_an_append_on_an_end_another_store_moved_chains_onto_the_new_head_and_writes_once(
    open_store: OpenStore, postgres_database: str
) -> None:
    a, b = await open_store(), await open_store()
    [first] = await a.append([say("s", "a1")])
    [second] = await b.append([say("s", "b1")])
    # a's last append left seq 2 next and its own event as the head: both moved since.
    [third] = await a.append([say("s", "a2")])
    [fourth] = await a.append([say("s", "a3")])  # on the end a's last append left

    assert [e.seq for e in (first.event, second.event, third.event, fourth.event)] == [1, 2, 3, 4]
    assert third.event.parents == (second.event.id,) and fourth.event.parents == (third.event.id,)
    async with connected(postgres_database) as conn:
        assert await rows(conn, COUNTS) == [(4, 4, 4)]  # the refused try recorded nothing
    log = await a.query(EventQuery())
    assert chain_breaks(log) == []
    assert (await b.verify()).ok


async def test_a_key_the_log_holds_is_answered_with_its_event_when_the_end_was_known(
    open_store: OpenStore, postgres_database: str
) -> None:
    store = await open_store()
    [held] = await store.append([say("s", "kept", key="k")])
    [again, new] = await store.append([say("s", "again", key="k"), say("s", "new")])

    assert (again.created, again.event) == (False, held.event)
    assert (new.created, new.event.seq, new.event.parents) == (True, 2, (held.event.id,))
    async with connected(postgres_database) as conn:
        assert await rows(conn, COUNTS) == [(2, 2, 2)]
    assert (await store.verify()).ok


async def test_a_one_statement_append_tried_again_with_its_token_gets_its_first_answer(
    open_store: OpenStore, postgres_database: str
) -> None:
    """What a daemon whose connection broke after the commit, before the answer, does."""
    await open_store()
    end = LogEnd()
    batch = [say("s", "x"), say("t", "y")]
    async with connected(postgres_database) as conn:
        await append_batch(conn, [say("s", "before")], "t0", False, end)
        first, trips = await traced_round_trips(conn, append_batch(conn, batch, "t1", False, end))
        counts = await rows(conn, COUNTS)
        again = await append_batch(conn, batch, "t1", True, end)
        assert await rows(conn, COUNTS) == counts == [(3, 3, 2)]

    assert trips == 1
    assert again == first
    assert [(r.created, r.event.seq) for r in again] == [(True, 2), (True, 3)]


async def test_an_append_at_once_cut_off_while_it_waits_for_the_lock_is_written_once(
    open_store: OpenStore, postgres_database: str
) -> None:
    store = await open_store()
    [first] = await store.append([say("s", "before")])
    async with connected(postgres_database) as admin, connected(postgres_database) as locker:
        async with locker.transaction():
            # Another daemon's append holds the append lock: ours waits in toka_append for it.
            await locker.execute("SELECT pg_advisory_xact_lock(%s)", (APPEND_LOCK,))
            appending = asyncio.create_task(store.append([say("s", "waited")]))
            waiting = await _until_waiting(admin)
            await rows(admin, "SELECT pg_terminate_backend(%s)", waiting)
            retried = await _until_waiting(admin, not_pid=waiting)
            assert retried != waiting and not appending.done()
        [second] = await asyncio.wait_for(appending, 30)
        assert await rows(admin, COUNTS) == [(2, 2, 2)]
    assert (second.created, second.event.seq, second.event.parents) == (True, 2, (first.event.id,))
    assert (await store.verify()).ok


async def _until_waiting(admin: psycopg.AsyncConnection[Any], not_pid: int | None = None) -> int:
    """The pid of the store's writer once it waits for a lock (another than ``not_pid``)."""
    sql = (
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'toka writer'"
        " AND wait_event_type = 'Lock' AND pid <> %s"
    )
    for _ in range(3000):
        found = await rows(admin, sql, not_pid or 0)
        if found:
            return int(found[0][0])
        await asyncio.sleep(0.01)
    raise AssertionError("the writer never waited for the lock")


async def test_two_stores_each_appending_in_turn_keep_one_dense_chain_per_session(
    open_store: OpenStore, postgres_database: str
) -> None:
    async with connected(postgres_database) as conn:  # counts calls of toka_append, for the last assertion
        await conn.execute(f"ALTER DATABASE \"{conn.info.dbname}\" SET track_functions = 'pl'")
    a, b = await open_store(), await open_store()

    async def appends(store: PostgresStore, name: str) -> list[Event]:
        done = []
        for n in range(40):
            batch = [say("shared", f"{name}{n}")] + ([say(name, f"{n}")] if n % 3 == 0 else [])
            done += [r.event for r in await store.append(batch)]
        return done

    from_a, from_b = await asyncio.gather(appends(a, "a"), appends(b, "b"))
    await a.close()
    await b.close()

    reader = await open_store()
    log = await reader.query(EventQuery())
    assert len(log) == len(from_a) + len(from_b) == 2 * (40 + 14)
    assert {e.id for e in log} == {e.id for e in from_a + from_b}
    assert [e.seq for e in log] == list(range(1, len(log) + 1))
    assert chain_breaks(log) == []
    report = await reader.verify()
    assert (report.ok, report.events) == (True, len(log))
    # The stores' connections have ended, and each backend sends its function counts as it exits.
    async with connected(postgres_database) as conn:
        for _ in range(3000):
            calls = await rows(conn, "SELECT sum(calls) FROM pg_stat_user_functions WHERE funcname = 'toka_append'")
            if calls[0][0]:
                break
            await asyncio.sleep(0.01)
    assert calls[0][0] > 0


async def test_the_notices_of_a_stores_own_commits_do_not_wake_its_follower(
    open_store: OpenStore, postgres_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its own commits reach its daemon through the group committer: only another daemon's
    commit calls ``changed()`` (with no poll in the test's time, only notices count)."""
    monkeypatch.setattr(postgres_store, "POLL_S", 3600.0)
    own, other = await open_store(), await open_store()
    calls: list[int] = []
    woken = asyncio.Event()

    def changed() -> None:
        calls.append(len(calls))
        woken.set()

    following = asyncio.create_task(own.follow(changed, lambda: None))
    try:
        async with connected(postgres_database) as listener:
            await listener.execute("LISTEN toka_events")
            await asyncio.wait_for(woken.wait(), 30)  # once, as the store's listener connects
            calls.clear()
            woken.clear()
            for n in range(10):
                await own.append([say("s", f"own {n}")])
            # Sent to every listener, the store's too, by the time this one has them all.
            notices = listener.notifies(timeout=30, stop_after=10)
            assert len([notice async for notice in notices]) == 10
        await other.append([say("s", "other")])
        await asyncio.wait_for(woken.wait(), 30)
        assert calls == [0]
    finally:
        following.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await following


async def test_a_role_refused_toka_append_appends_in_two_trips(open_store: OpenStore, postgres_database: str) -> None:
    """A database that revoked EXECUTE from PUBLIC, and a role granted only the tables' rights
    (docs/postgres.md): its appends are written all the same, chained."""
    await open_store()  # the schema, as the owner
    role = "toka_append_" + secrets.token_hex(4)
    async with connected(postgres_database) as conn:
        for statement in (
            "REVOKE EXECUTE ON FUNCTION toka_append FROM PUBLIC",
            f"CREATE ROLE {role} LOGIN",
            f"GRANT USAGE ON SCHEMA public TO {role}",
            f"GRANT SELECT, INSERT ON events, blobs, search_text, toka_migrations, usage_requests TO {role}",
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON sessions, session_agents, session_kinds, usage_buckets,"
            f" append_batches, cursors, log_end TO {role}",
            f"GRANT SELECT, UPDATE ON projected TO {role}",
        ):
            await conn.execute(statement)
    parts = urllib.parse.urlsplit(postgres_database)
    as_role = parts._replace(netloc=f"{role}@{parts.netloc.rsplit('@', 1)[-1]}").geturl()
    store = await PostgresStore.open(as_role)
    try:
        results = [(await store.append([say("s", f"n{n}")]))[0] for n in range(3)]
        assert [r.event.seq for r in results] == [1, 2, 3]
        assert chain_breaks(await store.query(EventQuery())) == []
        assert (await store.verify()).ok
    finally:
        await store.close()
        async with connected(postgres_database) as conn:
            await conn.execute(f"DROP OWNED BY {role}")
            await conn.execute(f"DROP ROLE {role}")
