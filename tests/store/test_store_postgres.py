"""What only the PostgreSQL backend has, on the run's real server: appends retried with their token,
reconnection after the server cut the writer off, one dense chain while two daemons' stores append
at once, migrations raced by two opens, databases it refuses, and a server it cannot reach."""

from __future__ import annotations

import asyncio
import gc
import logging
import socket
import subprocess
import sys
import time
import uuid
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
import pytest

from store.base import EventQuery
from store.errors import ConfigError, SchemaTooNew, StoreError, StoreUnavailable, UsageError
from store.events import Event, NewEvent
from store.postgres.append import append_batch
from store.postgres.schema import STEPS
from store.postgres.store import PostgresStore

OpenStore = Callable[[], Awaitable[PostgresStore]]

# What one append writes to each table; the sessions' event counts summed.
COUNTS = (
    "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM blobs), (SELECT count(*) FROM search_text),"
    " (SELECT count(*) FROM append_batches), (SELECT coalesce(sum(events), 0) FROM sessions)"
)
TOKA_CONNECTIONS = (
    "SELECT pid, wait_event_type FROM pg_stat_activity"
    " WHERE datname = current_database() AND application_name = %s AND pid <> pg_backend_pid()"
)
PASSWORD = "pw-" + uuid.uuid4().hex


@asynccontextmanager
async def connected(url: str) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    """A connection of the test's own (autocommit), beside the store's."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        yield conn


async def rows(conn: psycopg.AsyncConnection[Any], sql: str, *params: Any) -> list[tuple[Any, ...]]:
    cursor = await conn.execute(sql, params or None)
    return await cursor.fetchall()


async def until(what: str, found: Callable[[], Awaitable[Any]], timeout: float = 30.0) -> Any:
    """The first true value of ``found()``, asked again until it comes; fails after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not (value := await found()):
        assert time.monotonic() < deadline, f"waited {timeout}s for {what}"
        await asyncio.sleep(0.01)
    return value


def say(session: str, text: str, **fields: Any) -> NewEvent:
    return NewEvent(session, "message", {"text": text}, **fields)


async def test_a_token_tried_again_gets_the_first_answer_and_writes_nothing(
    open_store: OpenStore, postgres_database: str
) -> None:
    store = await open_store()
    [held] = await store.append([say("s", "kept once", key="k")])
    # The first event's key is held already (created False); the others are new.
    batch = [say("s", "again", key="k"), say("s", "new"), NewEvent("t", "tool.call", {"tool": "grep"})]
    async with connected(postgres_database) as conn:
        first = await append_batch(conn, batch, "token-1", retry=False)
        await store.project()  # the derived tables counted too, once they applied what was committed
        before = await rows(conn, COUNTS)
        again = await append_batch(conn, batch, "token-1", retry=True)
        await store.project()
        after = await rows(conn, COUNTS)
        other = await append_batch(conn, batch, "token-2", retry=True)

    assert [(r.created, r.event.seq) for r in first] == [(False, 1), (True, 2), (True, 3)]
    assert first[0].event == held.event
    assert again == first  # events and created flags alike
    assert before == after == [(3, 3, 3, 2, 3)]
    # The same batch under another token is another append: it is written.
    assert [(r.created, r.event.seq) for r in other] == [(False, 1), (True, 4), (True, 5)]
    assert (await store.verify()).ok


async def test_an_append_after_the_writer_was_terminated_reconnects(
    open_store: OpenStore, postgres_database: str
) -> None:
    store = await open_store()
    [first] = await store.append([say("s", "before")])
    async with connected(postgres_database) as admin:
        [(writer, _)] = await rows(admin, TOKA_CONNECTIONS, "toka writer")
        assert await rows(admin, "SELECT pg_terminate_backend(%s)", writer) == [(True,)]
        await until("the writer's backend to end", lambda: _gone(admin, writer))

        [second] = await store.append([say("s", "after")])

        [(new_writer, _)] = await rows(admin, TOKA_CONNECTIONS, "toka writer")
        assert new_writer != writer
        await store.project()
        assert await rows(admin, COUNTS) == [(2, 2, 2, 2, 2)]
    assert (second.created, second.event.seq, second.event.parents) == (True, 2, (first.event.id,))
    assert store.connection_state()["reachable"] is True
    assert (await store.verify()).ok


async def test_an_append_cut_off_while_it_waits_is_retried_and_written_once(
    open_store: OpenStore, postgres_database: str
) -> None:
    store = await open_store()
    [first] = await store.append([say("s", "before")])
    async with connected(postgres_database) as admin, connected(postgres_database) as locker:
        async with locker.transaction():
            # Another daemon's append holds the events table: ours waits for it in the database.
            await locker.execute("LOCK TABLE events IN EXCLUSIVE MODE")
            appending = asyncio.create_task(store.append([say("s", "waited")]))
            waiting = await until("the writer to wait for the lock", lambda: _waiting(admin))
            await rows(admin, "SELECT pg_terminate_backend(%s)", waiting)
            retried = await until("the retry to wait for the lock", lambda: _waiting(admin, not_pid=waiting))
            assert retried != waiting and not appending.done()
        [second] = await asyncio.wait_for(appending, 30)
        await store.project()
        assert await rows(admin, COUNTS) == [(2, 2, 2, 2, 2)]
    assert (second.created, second.event.seq, second.event.parents) == (True, 2, (first.event.id,))
    assert (await store.verify()).ok


async def _gone(admin: psycopg.AsyncConnection[Any], pid: int) -> bool:
    return not await rows(admin, "SELECT 1 FROM pg_stat_activity WHERE pid = %s", pid)


async def _waiting(admin: psycopg.AsyncConnection[Any], not_pid: int | None = None) -> int | None:
    """The pid of the store's writer while it waits for a lock (another than ``not_pid``)."""
    found = [pid for pid, wait in await rows(admin, TOKA_CONNECTIONS, "toka writer") if wait == "Lock"]
    return next((pid for pid in found if pid != not_pid), None)


async def test_two_stores_appending_at_once_keep_seqs_dense_and_each_session_one_chain(
    open_store: OpenStore,
) -> None:
    a, b = await open_store(), await open_store()
    calls: list[Awaitable[Any]] = []
    for n in range(25):
        calls += [
            a.append([say("shared", f"a{n}")]),
            b.append([say("shared", f"b{n}")]),
            a.append([say("only-a", f"a{n}")]),
            b.append([say("only-b", f"b{n}")]),
            # A batch over several sessions, each event chained onto its own session.
            a.append([say("shared", f"a{n}+"), say("only-b", f"a{n}+"), say("only-a", f"a{n}+")]),
            b.append([say("only-a", f"b{n}+"), say("shared", f"b{n}+")]),
        ]
    results = [r for batch in await asyncio.gather(*calls) for r in batch]

    log = await b.query(EventQuery())
    assert len(results) == len(log) == 25 * 9
    assert all(r.created for r in results)
    assert {r.event.id for r in results} == {e.id for e in log}
    assert [e.seq for e in log] == list(range(1, len(log) + 1))
    assert _breaks_in_chains(log) == []
    heads = {s: [e for e in log if e.session == s] for s in ("shared", "only-a", "only-b")}
    for store in (a, b):
        sessions = {info.session: (info.events, info.head) for info in await store.sessions()}
        assert sessions == {s: (len(events), events[-1].id) for s, events in heads.items()}
        report = await store.verify()
        assert (report.ok, report.events) == (True, len(log))


async def test_two_stores_appending_one_key_at_once_write_it_once(open_store: OpenStore) -> None:
    """What a compare-and-set of the daemon rests on: the append decides, under its lock, which of
    two writers of one key commits; the other is answered with the event that holds it."""
    a, b = await open_store(), await open_store()
    for n in range(20):
        first, second = await asyncio.gather(
            a.append([say("toka.memory", f"a{n}", key=f"k:{n}")]), b.append([say("toka.memory", f"b{n}", key=f"k:{n}")])
        )
        assert sorted([first[0].created, second[0].created]) == [False, True]
        assert first[0].event == second[0].event
    log = await a.query(EventQuery(session="toka.memory"))
    assert [event.key for event in log] == [f"k:{n}" for n in range(20)]


def _breaks_in_chains(log: list[Event]) -> list[tuple[int, tuple[str, ...]]]:
    """(seq, parents) of each event whose parents are not just the previous event of its session."""
    last: dict[str, str] = {}
    breaks = []
    for event in log:
        expected = (last[event.session],) if event.session in last else ()
        if event.parents != expected:
            breaks.append((event.seq, event.parents))
        last[event.session] = event.id
    return breaks


async def test_rebuilds_while_another_store_appends_count_and_index_every_event_once(
    open_store: OpenStore, postgres_database: str
) -> None:
    a, b = await open_store(), await open_store()
    await a.append([say(f"s{n}", f"word{n}") for n in range(100)])
    stop = asyncio.Event()

    async def keep_appending() -> int:
        n = 0
        while not stop.is_set():  # new sessions and old ones, while the other daemon rebuilds
            await a.append([say(f"new{n}", f"fresh{n}"), say(f"s{n % 100}", "again")])
            n += 1
        return n

    appending = asyncio.create_task(keep_appending())
    try:
        for _ in range(10):
            await b.rebuild_projections()
            await b.rebuild_search_index()
    finally:
        stop.set()
        appended = await appending

    log = await a.query(EventQuery())
    assert appended > 0 and len(log) == 100 + 2 * appended
    sessions: dict[str, tuple[int, str]] = {}
    for event in log:
        sessions[event.session] = (sessions.get(event.session, (0, ""))[0] + 1, event.id)
    assert {info.session: (info.events, info.head) for info in await b.sessions()} == sessions
    async with connected(postgres_database) as conn:
        assert await rows(conn, "SELECT count(*), count(DISTINCT seq) FROM search_text") == [(len(log), len(log))]
    assert (await b.verify()).ok


async def test_reads_at_once_on_a_new_store_open_one_connection(open_store: OpenStore, postgres_database: str) -> None:
    store = await open_store()
    await store.append([say("s", "hello")])

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        found = await asyncio.gather(*(store.get_by_seq(1) for _ in range(20)))
        gc.collect()

    assert {event.seq for event in found} == {1}
    # A connection opened beside the one kept would be dropped still open, with psycopg's
    # ResourceWarning (the collection may also find what earlier tests of the process left).
    dropped = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert [message for message in dropped if "psycopg" in message] == []
    async with connected(postgres_database) as admin:
        assert len(await rows(admin, TOKA_CONNECTIONS, "toka reader")) == 1


async def test_two_stores_opening_an_empty_database_at_once_migrate_it_once(
    open_store: OpenStore, postgres_database: str
) -> None:
    a, b = await asyncio.gather(open_store(), open_store())

    async with connected(postgres_database) as conn:
        recorded = await rows(conn, "SELECT seq, name FROM toka_migrations ORDER BY seq")
    assert recorded == [(n, name) for n, (name, _) in enumerate(STEPS, 1)]
    [from_a] = await a.append([say("s", "from a")])
    [from_b] = await b.append([say("s", "from b")])
    assert (from_a.event.seq, from_b.event.seq, from_b.event.parents) == (1, 2, (from_a.event.id,))


async def test_a_database_of_a_newer_toka_is_refused_and_left_untouched(
    open_store: OpenStore, postgres_database: str
) -> None:
    store = await open_store()
    await store.append([say("s", "written by this toka")])
    async with connected(postgres_database) as conn:
        future = "INSERT INTO toka_migrations (seq, name) VALUES (%s, 'p999_from_the_future')"
        await conn.execute(future, (len(STEPS) + 1,))
        before = await _contents(conn)

        with pytest.raises(SchemaTooNew, match="newer toka") as raised:
            await PostgresStore.open(postgres_database)

        assert "p999_from_the_future" in raised.value.message
        assert await _contents(conn) == before
        assert len(before[0]) == len(STEPS) + 1


async def _contents(conn: psycopg.AsyncConnection[Any]) -> tuple[list[Any], list[Any], list[Any]]:
    return (
        await rows(conn, "SELECT * FROM toka_migrations ORDER BY seq"),
        await rows(conn, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1"),
        await rows(conn, COUNTS),
    )


async def test_a_database_with_another_programs_events_table_is_refused(postgres_database: str) -> None:
    async with connected(postgres_database) as conn:
        await conn.execute("CREATE TABLE events (id serial PRIMARY KEY, what text)")
        await conn.execute("INSERT INTO events (what) VALUES ('theirs')")

        with pytest.raises(StoreError, match="not a toka database") as raised:
            await PostgresStore.open(postgres_database)

        assert type(raised.value) is StoreError  # neither unreachable nor too new: not ours
        assert await rows(conn, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()") == [("events",)]
        assert await rows(conn, "SELECT * FROM events") == [(1, "theirs")]


@pytest.mark.parametrize("refusal", ["newer schema", "foreign tables"])
async def test_a_refused_open_leaves_no_connection_behind(postgres_database: str, refusal: str) -> None:
    async with connected(postgres_database) as conn:
        if refusal == "newer schema":
            await conn.execute("CREATE TABLE toka_migrations (seq integer PRIMARY KEY, name text NOT NULL)")
            await conn.execute("INSERT INTO toka_migrations VALUES (1, 'p999_from_the_future')")
        else:
            await conn.execute("CREATE TABLE blobs (digest text)")

        with pytest.raises(StoreError) as raised:
            await PostgresStore.open(postgres_database)

        # Closed by open itself: not when the store is collected, which the error's traceback delays.
        assert raised.traceback
        left = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'toka %'"
        assert await until("the refused store's connection to end", lambda: _none(conn, left)) is True


async def _none(conn: psycopg.AsyncConnection[Any], sql: str) -> bool:
    return not await rows(conn, sql)


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A local TCP port that refuses connections: bound by this process, not listening."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


@pytest.mark.parametrize("form", ["url to a closed port", "url to a missing socket folder", "key=value"])
async def test_an_unreachable_server_is_unavailable_and_the_password_never_shown(
    form: str, refused_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    url = {
        "url to a closed port": f"postgresql://toka:{PASSWORD}@127.0.0.1:{refused_port}/toka",
        "url to a missing socket folder": f"postgresql://toka:{PASSWORD}@/toka?host=/nonexistent-{PASSWORD[3:11]}",
        "key=value": f"host=/nonexistent-{PASSWORD[3:11]} dbname=toka user=toka password={PASSWORD}",
    }[form]
    caplog.set_level(logging.DEBUG, logger="toka.store")

    with pytest.raises(StoreUnavailable) as raised:
        await PostgresStore.open(url)

    error = raised.value
    shown = [error.message, error.hint or "", str(error), repr(error), error.lines(), caplog.text]
    assert [text for text in shown if PASSWORD in text] == []
    assert "cannot be reached" in error.message and "***" in error.message  # where, with the password hidden
    assert "unreachable" in caplog.text


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://toka:{PASSWORD}%zz@/toka?host=/nonexistent",  # a bad percent-escape in the password
        f"postgresql://toka:{PASSWORD}@[::1/toka",  # an unclosed IPv6 address
        f"host=/nonexistent dbname=toka password={PASSWORD[:8]} {PASSWORD[8:]}",  # a space in an unquoted value
        f"host=/nonexistent dbname=toka password='{PASSWORD}",  # an unclosed quote
    ],
    ids=["percent escape", "ipv6 bracket", "space", "quote"],
)
async def test_a_url_libpq_cannot_read_is_a_config_error_that_shows_no_password(url: str) -> None:
    with pytest.raises(ConfigError, match="not a connection string libpq can read") as raised:
        await PostgresStore.open(url)

    shown = [raised.value.message, raised.value.hint or "", str(raised.value)]
    assert [text for text in shown if PASSWORD[3:11] in text or PASSWORD[-8:] in text] == []


async def test_prune_and_gc_are_refused_and_change_nothing(open_store: OpenStore) -> None:
    store = await open_store()
    await store.append([NewEvent("s", "message", {"text": f"old {n}"}, ts=1_000_000 + n) for n in range(3)])
    before = await store.query(EventQuery())

    with pytest.raises(UsageError, match="cannot be pruned"):
        await store.prune("s", 2_000_000)
    with pytest.raises(UsageError, match="nothing to collect"):
        await store.collect_garbage()

    assert await store.query(EventQuery()) == before
    assert (await store.stats()).blobs == 3


async def test_an_upgrade_that_adds_the_usage_table_fills_it_from_the_log(
    open_store: OpenStore, postgres_database: str
) -> None:
    """A database from before p005 already holds usage events: the first open after the upgrade
    fills the new projection from them, as a rebuild would."""
    store = await open_store()
    usage = {"model": "claude-opus-4-6", "input_tokens": 10, "output_tokens": 5}
    await store.append([NewEvent("s", "usage", usage, "main"), NewEvent("s", "usage", usage, "main")])
    expected = await store.usage_rows()
    assert [row.calls for row in expected] == [2]
    await store.close()
    async with connected(postgres_database) as conn:  # back to the schema before the step
        await conn.execute("DROP TABLE usage_buckets")
        await conn.execute("DROP TABLE usage_requests")
        await conn.execute("DELETE FROM toka_migrations WHERE name IN ('p005_usage_buckets', 'p006_usage_requests')")

    reopened = await open_store()
    assert await reopened.usage_rows() == expected


async def test_session_tables_left_empty_over_the_log_are_rebuilt_when_it_opens(
    open_store: OpenStore, postgres_database: str
) -> None:
    """As a kill between an upgrade's last step and its rebuild left them in an older toka."""
    store = await open_store()
    await store.append([say("s", "one"), say("s", "two"), NewEvent("s", "usage", {"input_tokens": 3}, "main")])
    before, usage = await store.sessions(), await store.usage_rows()
    last = (await store.query(EventQuery(order="desc", limit=1)))[0]
    await store.close()
    async with connected(postgres_database) as conn:
        for table in ("sessions", "session_agents", "session_kinds", "usage_buckets"):
            await conn.execute(f"DELETE FROM {table}")

    reopened = await open_store()
    assert await reopened.sessions() == before
    assert await reopened.usage_rows() == usage
    [added] = await reopened.append([say("s", "three")])
    assert added.event.parents == (last.id,)
    assert (await reopened.verify()).ok


async def test_an_append_chains_onto_the_logs_last_event_whatever_the_session_table_says(
    open_store: OpenStore, postgres_database: str
) -> None:
    store = await open_store()
    [first] = await store.append([say("s", "one")])
    async with connected(postgres_database) as conn:
        await conn.execute("DELETE FROM sessions")
    [second] = await store.append([say("s", "two")])
    assert second.event.parents == (first.event.id,)


UPGRADE_KILLED_IN_ITS_REBUILD = """
import asyncio, os, sys
from store.postgres import projections
from store.postgres.store import PostgresStore

async def killed(conn):
    os._exit(9)  # SIGKILL in the middle of refilling the projection

projections.project_usage = killed
asyncio.run(PostgresStore.open(sys.argv[1]))
"""


async def test_an_upgrade_killed_while_it_refills_a_projection_commits_nothing_of_its_last_step(
    open_store: OpenStore, postgres_database: str
) -> None:
    store = await open_store()
    usage = {"model": "claude-opus-4-6", "input_tokens": 10, "output_tokens": 5}
    await store.append([NewEvent("s", "usage", usage, "main"), NewEvent("s", "usage", usage, "main")])
    await store.close()
    async with connected(postgres_database) as conn:  # back to the schema before the last five steps
        assert [name for name, _ in STEPS[-5:]] == [
            "p008_usage_claims_by_size",
            "p009_log_end",
            "p010_last_active",
            "p011_projected",
            "p012_append_at_once",
        ]
        await conn.execute(
            "DELETE FROM toka_migrations WHERE name IN ('p008_usage_claims_by_size', 'p009_log_end',"
            " 'p010_last_active', 'p011_projected', 'p012_append_at_once')"
        )
        await conn.execute("DROP TABLE log_end")
        await conn.execute("DROP TABLE projected")
        await conn.execute("DROP FUNCTION toka_append")

    killed = subprocess.run(
        [sys.executable, "-c", UPGRADE_KILLED_IN_ITS_REBUILD, postgres_database], check=False, timeout=60
    )

    assert killed.returncode == 9
    async with connected(postgres_database) as conn:
        steps = [row[0] for row in await rows(conn, "SELECT name FROM toka_migrations ORDER BY seq")]
    assert steps == [name for name, _ in STEPS[:-1]]
    reopened = await open_store()
    assert [row.calls for row in await reopened.usage_rows()] == [2]
