"""The PostgreSQL backend: one log shared by the daemons of a whole team (docs/postgres.md).

Each daemon keeps its own socket, hooks, spool, group commit and subscriptions, and connects
to the shared database with three connections: a writer (appends, one transaction at a time
across all daemons: store/postgres_append.py), a reader (queries, replay, verify, search:
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
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

import psycopg

from store.base import CHUNK, AppendResult, EventQuery, EventStore, ProgressCallback, SessionInfo, Stats, VerifyReport
from store.errors import ConfigError, NotFound, StoreError, StoreUnavailable, UsageError
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
from store.url import redacted, scrubbed

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

    def __init__(self, url: str, role: str, reach: Reachability, options: str = "") -> None:
        self.url = url
        self.role = role
        self._options = options  # server settings for this connection, as libpq's "options"
        self._reach = reach
        self._conn: psycopg.AsyncConnection[Any] | None = None
        self._failures = 0
        self.retry_at = 0.0
        # Calls that find no connection at once wait for one to be opened, instead of each
        # opening its own (all but the last would be left open, unused).
        self._connecting = asyncio.Lock()

    def _usable(self) -> psycopg.AsyncConnection[Any] | None:
        conn = self._conn
        return conn if conn is not None and not conn.closed and not conn.broken else None

    async def get(self) -> psycopg.AsyncConnection[Any]:
        conn = self._usable()
        if conn is not None:
            return conn
        async with self._connecting:
            return await self._connect()

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        conn = self._usable()
        if conn is not None:  # opened by the call this one waited for
            return conn
        if time.monotonic() < self.retry_at:
            raise self._reach.unavailable()
        try:
            self._conn = await psycopg.AsyncConnection.connect(
                self.url,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name=f"toka {self.role}",  # how the server's views name it
                options=self._options or None,  # libpq drops a parameter given as None
            )
        except psycopg.ProgrammingError as exc:
            # libpq could not read the URL: no server will fix that. Its message quotes the part it
            # stumbled on, which may be the password: every quoted part is hidden.
            detail = _QUOTED.sub('"***"', _first_line(exc))
            raise ConfigError(
                f"store.url is not a connection string libpq can read ({detail})",
                "write it as postgresql://USER@HOST/DB or host=HOST dbname=DB (toka config set store.url ...)",
            ) from None
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

    def __init__(self, url: str) -> None:
        self._url = url
        self.location = redacted(url)
        self.reachable = True
        self.error: str | None = None
        self.since = time.time()
        self.outages = 0

    def failed(self, exc: BaseException) -> None:
        error = scrubbed(_first_line(exc), self._url)  # libpq may quote the URL, password and all
        if self.reachable:
            self.reachable, self.since = False, time.time()
            self.outages += 1
            log.warning("database %s unreachable: %s", self.location, error)
        self.error = error

    def reached(self) -> None:
        if not self.reachable:
            log.info("database %s reachable again", self.location)
            self.reachable, self.since = True, time.time()

    def unavailable(self) -> StoreUnavailable:
        return StoreUnavailable(
            f"the database {self.location} cannot be reached ({self.error})",
            "hooks keep spooling and the daemon reconnects on its own; check the server (toka doctor)",
        )

    def to_json(self) -> dict[str, Any]:
        return {"reachable": self.reachable, "error": self.error, "since": self.since, "outages": self.outages}


_QUOTED = re.compile(r'"[^"]*"')


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


class PostgresStore(EventStore):
    shared = True

    def __init__(self, url: str, durability: str = "normal") -> None:
        self.url = url
        self.reach = Reachability(url)
        # durability "full" insists on synchronous commits; "normal" keeps the server's own
        # setting (PostgreSQL's default is synchronous too), which is its administrator's call.
        sync = "-c synchronous_commit=on" if durability == "full" else ""
        self._writer = Link(url, "writer", self.reach, sync)
        self._reader = Link(url, "reader", self.reach)
        # One transaction at a time on the writer: two calls interleaving their statements on one
        # connection would nest one transaction in the other, and both would fail.
        self._writing = asyncio.Lock()
        self._appends = 0

    @property
    def location(self) -> str:
        return self.reach.location

    @classmethod
    async def open(cls, url: str, durability: str = "normal") -> PostgresStore:
        """Connect and bring the schema up to date; StoreUnavailable when the server cannot be
        reached, SchemaTooNew when a newer toka wrote it."""
        store = cls(url, durability)
        try:
            await store._write(migrate)
        except BaseException:
            await store.close()  # a refused or failed open leaves no connection behind
            raise
        return store

    async def _run(
        self, link: Link, fn: Callable[..., Awaitable[T]], *args: Any, conn: psycopg.AsyncConnection[Any] | None = None
    ) -> T:
        conn = conn or await link.get()
        try:
            return await fn(conn, *args)
        except psycopg.OperationalError as exc:
            if conn.broken or conn.closed:
                link.lost(exc)
                raise self.reach.unavailable() from None
            raise StoreError(f"database error on {self.location}: {scrubbed(_first_line(exc), self.url)}") from None
        except psycopg.Error as exc:
            raise StoreError(f"database error on {self.location}: {scrubbed(_first_line(exc), self.url)}") from None

    async def _read(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        return await self._run(self._reader, fn, *args)

    async def _write(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        async with self._writing:
            return await self._run(self._writer, fn, *args)

    async def append(self, batch: Sequence[NewEvent]) -> list[AppendResult]:
        token = uuid.uuid4().hex
        deadline = time.monotonic() + APPEND_RETRY_S
        retry = False
        while True:
            try:
                results = await self._write(append_batch, list(batch), token, retry)
                break
            except StoreUnavailable:
                wait = max(0.0, self._writer.retry_at - time.monotonic())
                if time.monotonic() + wait > deadline:
                    raise
                await asyncio.sleep(wait)
                retry = True
        self._appends += 1
        if self._appends % FORGET_EVERY == 0:
            await self._write(forget_old_batches)
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
            await listener.close()

    def connection_state(self) -> dict[str, Any]:
        return self.reach.to_json()

    async def get(self, event_id: str) -> Event:
        return await self._read(get_event, event_id)

    async def present(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` the log holds: one indexed lookup for them all."""
        rows = await self._read(fetch_rows, "SELECT id FROM events WHERE id = ANY(?)", (list(ids),))
        return {row[0] for row in rows}

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
        return await self._write(rebuild_projections)

    async def search(self, query: SearchQuery) -> list[SearchHit]:
        checked = query.checked()
        found: dict[int, SearchHit] = {}
        offset = 0
        while len(found) < checked.limit:  # more than one page only when a partial text did not match
            sql, params = search_sql(checked, offset)
            rows = await self._read(fetch_rows, sql, params)
            for hit in hits(checked, rows):
                found.setdefault(hit.seq, hit)
            if len(rows) < checked.limit:
                break
            offset += len(rows)
        return list(found.values())[: checked.limit]

    async def rebuild_search_index(self) -> int:
        return await self._write(rebuild_search_index)

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
        await self._write(lambda conn: conn.execute("VACUUM"))

    async def close(self) -> None:
        await self._writer.close()
        await self._reader.close()
