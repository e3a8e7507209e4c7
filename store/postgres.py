"""The PostgreSQL backend: one log shared by the daemons of a whole team (docs/postgres.md).

Each daemon keeps its own socket, hooks, spool, group commit and subscriptions, and connects
to the shared database with three connections: a writer (appends, in transactions that lock
the events table: store/postgres_append.py), a reader (queries, replay, verify, search:
store/postgres_reads.py, store/postgres_search.py) and a listener, which LISTENs for the
notice every append sends and tells the daemon to read what other daemons committed.

A connection that breaks (the server restarted, a backend was terminated, the network went)
is opened again on next use; while the server cannot be reached every call fails at once with
:class:`~store.errors.StoreUnavailable` (hooks then spool) and the next try waits a backoff
that doubles up to :data:`MAX_BACKOFF_S`. An append that lost its connection is retried for
:data:`APPEND_RETRY_S` with the same idempotency token, so a commit whose acknowledgement was
lost is answered, not written again.

psycopg is imported here only: the daemon loads this module when ``store.backend`` is
``postgres``, and ``pip install 'toka[postgres]'`` provides it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import pq

from store.base import CHUNK, AppendResult, EventQuery, EventStore, ProgressCallback, SessionInfo, Stats, VerifyReport
from store.errors import NotFound, StoreError, StoreUnavailable, UsageError
from store.events import Event, NewEvent
from store.postgres_append import CHANNEL, append_batch, forget_old_batches
from store.postgres_reads import (
    fetch_rows,
    get_event,
    get_payload,
    read_sessions,
    read_stats,
    rebuild_projections,
    rebuild_search_index,
    verify_chain,
)
from store.postgres_schema import migrate
from store.postgres_search import hits, search_sql
from store.query import where_clause
from store.retention import Collected, Pruned
from store.rows import SELECT, event_of, event_text
from store.search import SearchHit, SearchQuery
from store.url import redacted

T = TypeVar("T")
log = logging.getLogger("toka.store")

CONNECT_TIMEOUT_S = 3
FIRST_BACKOFF_S = 0.05
MAX_BACKOFF_S = 5.0
APPEND_RETRY_S = 3.0
# How often the listener reads the log even without a notice: a notice is lost when the
# listener's own connection breaks, and this bounds how late a missed event shows.
POLL_S = 2.0
# The idempotency records of old appends are dropped once every this many appends.
FORGET_EVERY = 1000


class Link:
    """One named connection to the server, opened when first needed and again after it breaks."""

    def __init__(self, url: str, role: str, reach: Reachability) -> None:
        self.url = url
        self.role = role
        self._reach = reach
        self._conn: psycopg.AsyncConnection[Any] | None = None
        self._failures = 0
        self.retry_at = 0.0
        reach.links.append(self)

    def retry_now(self) -> None:
        """Another connection reached the server: the next call tries at once, not after the backoff."""
        self._failures = 0
        self.retry_at = 0.0

    async def get(self) -> psycopg.AsyncConnection[Any]:
        conn = self._conn
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        if time.monotonic() < self.retry_at:
            raise self._reach.unavailable()
        try:
            self._conn = await psycopg.AsyncConnection.connect(
                self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S, application_name=f"toka {self.role}"
            )
        except psycopg.Error as exc:
            self._failures += 1
            self.retry_at = time.monotonic() + min(MAX_BACKOFF_S, FIRST_BACKOFF_S * 2**self._failures)
            self._reach.failed(exc)
            raise self._reach.unavailable() from None
        self._failures = 0
        self._reach.reached()
        return self._conn

    def lost(self, exc: BaseException) -> None:
        """The connection broke: the next call opens a new one (at once, the first time)."""
        self._reach.failed(exc)
        self._conn = None

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None


class Reachability:
    """Whether the server answered the last attempt, and since when: for status and doctor."""

    def __init__(self, location: str) -> None:
        self.location = location
        self.reachable = True
        self.error: str | None = None
        self.since = time.time()
        self.outages = 0
        self.links: list[Link] = []  # the connections to the server, all backing off together

    def failed(self, exc: BaseException) -> None:
        if self.reachable:
            self.reachable, self.since = False, time.time()
            self.outages += 1
            log.warning("database %s unreachable: %s", self.location, _first_line(exc))
        self.error = _first_line(exc)

    def reached(self) -> None:
        if not self.reachable:
            log.info("database %s reachable again", self.location)
            self.reachable, self.since = True, time.time()
            for link in self.links:
                link.retry_now()

    def unavailable(self) -> StoreUnavailable:
        return StoreUnavailable(
            f"the database {self.location} cannot be reached ({self.error})",
            "hooks keep spooling and the daemon reconnects on its own; check the server (toka doctor)",
        )

    def to_json(self) -> dict[str, Any]:
        return {"reachable": self.reachable, "error": self.error, "since": self.since, "outages": self.outages}


def _reusable(conn: psycopg.AsyncConnection[Any]) -> bool:
    """Whether a connection that raised can take the next statement: after an ordinary error it
    is idle and out of pipeline mode. A backend that ends in the middle of a pipeline
    (pg_terminate_backend, a server shutting down) can leave it neither broken nor closed, since
    libpq has read the error but not yet the end of the socket, yet stuck in the aborted pipeline:
    every later statement would fail with "cannot exit pipeline mode while busy"."""
    return (
        not conn.broken
        and not conn.closed
        and conn.info.transaction_status == pq.TransactionStatus.IDLE
        and conn.pgconn.pipeline_status == pq.PipelineStatus.OFF
    )


def _server_cause(exc: BaseException) -> BaseException:
    """The error the server sent (AdminShutdown, say), under what psycopg raised while cleaning up."""
    while isinstance(exc.__context__, psycopg.Error):
        exc = exc.__context__
    return exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


class PostgresStore(EventStore):
    shared = True

    def __init__(self, url: str) -> None:
        self.url = url
        self.reach = Reachability(redacted(url))
        self._writer = Link(url, "writer", self.reach)
        self._reader = Link(url, "reader", self.reach)
        self._appends = 0

    @property
    def location(self) -> str:
        return self.reach.location

    @classmethod
    async def open(cls, url: str) -> PostgresStore:
        """Connect and bring the schema up to date; StoreUnavailable when the server cannot be
        reached, SchemaTooNew when a newer toka wrote it."""
        store = cls(url)
        try:
            await store._run(store._writer, migrate)
        except StoreUnavailable as exc:  # the daemon does not start: the usual hint would say it reconnects
            raise StoreUnavailable(
                exc.message,
                "start the database server, or correct store.url (toka config set store.url ...), then run"
                " the command again; hooks spool what they record until a daemon runs",
            ) from None
        return store

    async def _run(
        self, link: Link, fn: Callable[..., Awaitable[T]], *args: Any, conn: psycopg.AsyncConnection[Any] | None = None
    ) -> T:
        conn = conn or await link.get()
        try:
            return await fn(conn, *args)
        except psycopg.Error as exc:
            if not _reusable(conn):
                link.lost(_server_cause(exc))
                with contextlib.suppress(psycopg.Error):
                    await conn.close()
                if isinstance(exc, psycopg.OperationalError):
                    raise self.reach.unavailable() from None
            raise StoreError(f"database error on {self.location}: {_first_line(exc)}") from None

    async def _read(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        return await self._run(self._reader, fn, *args)

    async def append(self, batch: Sequence[NewEvent]) -> list[AppendResult]:
        token = uuid.uuid4().hex
        deadline = time.monotonic() + APPEND_RETRY_S
        # No connection: StoreUnavailable at once (a hook spools), as nothing of the append was sent.
        conn: psycopg.AsyncConnection[Any] | None = await self._writer.get()
        while True:
            if conn is not None:
                try:
                    results = await self._run(self._writer, append_batch, list(batch), token, conn=conn)
                    break
                except StoreUnavailable:
                    pass  # it broke under the append: committed or not, the server is asked again
            wait = max(0.0, self._writer.retry_at - time.monotonic())
            if time.monotonic() + wait > deadline:
                raise self.reach.unavailable()
            await asyncio.sleep(wait)
            try:
                conn = await self._writer.get()
            except StoreUnavailable:
                conn = None
        self._appends += 1
        if self._appends % FORGET_EVERY == 0:
            await self._run(self._writer, forget_old_batches)
        return results

    async def follow(self, changed: Callable[[], None], reconnected: Callable[[], None]) -> None:
        """Call ``changed()`` whenever another daemon may have committed: on each notice, every
        POLL_S, and after the listener connects; ``reconnected()`` after it connects again
        following an outage. Runs until cancelled."""
        listener = Link(self.url, "listener", self.reach)
        first = True
        try:
            while True:
                try:
                    conn = await listener.get()
                    await conn.execute(f"LISTEN {CHANNEL}")
                    if not first:
                        reconnected()
                    first = False
                    changed()
                    while True:
                        async for _ in conn.notifies(timeout=POLL_S):
                            changed()
                        changed()
                except StoreUnavailable:
                    await asyncio.sleep(max(FIRST_BACKOFF_S, listener.retry_at - time.monotonic()))
                except psycopg.Error as exc:
                    listener.lost(exc)
        finally:
            self.reach.links.remove(listener)
            await listener.close()

    def connection_state(self) -> dict[str, Any]:
        return self.reach.to_json()

    async def get(self, event_id: str) -> Event:
        return await self._read(get_event, event_id)

    async def get_by_seq(self, seq: int) -> Event:
        rows = await self._read(fetch_rows, SELECT + " WHERE e.seq = ?", (seq,))
        if not rows:
            raise NotFound(f"no event at seq {seq}", "seqs start at 1; see `toka events SESSION`")
        return event_of(rows[0])

    async def payload(self, digest: str) -> tuple[str, dict[str, Any]]:
        return await self._read(get_payload, digest)

    async def query(self, query: EventQuery) -> list[Event]:
        sql, params = where_clause(query)
        return [event_of(row) for row in await self._read(fetch_rows, SELECT + sql, params)]

    async def query_json(self, query: EventQuery) -> list[tuple[int, str]]:
        sql, params = where_clause(query)
        return [(row[0], event_text(row)) for row in await self._read(fetch_rows, SELECT + sql, params)]

    async def sessions(self) -> list[SessionInfo]:
        return await self._read(read_sessions, None)

    async def session(self, name: str) -> SessionInfo:
        return (await self._read(read_sessions, name))[0]

    async def replay(self, session: str, to_seq: int | None = None) -> AsyncIterator[Event]:
        after = 0
        while True:
            until = None if to_seq is None else to_seq + 1
            found = await self.query(EventQuery(session=session, after_seq=after, before_seq=until, limit=CHUNK))
            for event in found:
                yield event
            if len(found) < CHUNK:
                return
            after = found[-1].seq

    async def verify(self, session: str | None = None, progress: ProgressCallback | None = None) -> VerifyReport:
        return await self._read(verify_chain, session, progress)

    async def stats(self) -> Stats:
        return await self._read(read_stats)

    async def disk_bytes(self) -> int:
        rows = await self._read(fetch_rows, "SELECT pg_database_size(current_database())", ())
        return int(rows[0][0])

    async def rebuild_projections(self) -> int:
        return await self._run(self._writer, rebuild_projections)

    async def search(self, query: SearchQuery) -> list[SearchHit]:
        checked = query.checked()
        sql, params = search_sql(checked)
        return hits(checked, await self._read(fetch_rows, sql, params))

    async def rebuild_search_index(self) -> int:
        return await self._run(self._writer, rebuild_search_index)

    async def prune(self, session: str, before: int, dry_run: bool = False) -> Pruned | None:
        raise UsageError(
            f"the log at {self.location} cannot be pruned: pruning is not available on PostgreSQL yet",
            "keep the team's log whole, or prune a SQLite log before copying it (toka admin copy)",
        )

    async def collect_garbage(self, keep: Sequence[str] = (), dry_run: bool = False) -> Collected:
        raise UsageError(
            f"the log at {self.location} has nothing to collect: nothing is pruned on PostgreSQL",
            "payloads are collected after a prune, which only the SQLite backend does",
        )

    async def vacuum(self) -> None:
        await self._run(self._writer, lambda conn: conn.execute("VACUUM"))

    async def close(self) -> None:
        await self._writer.close()
        await self._reader.close()
