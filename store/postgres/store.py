"""The PostgreSQL backend: one log shared by the daemons of a whole team (docs/postgres.md).

Each daemon keeps its own socket, hooks, spool, group commit and subscriptions, and connects
to the shared database with these connections: a writer (appends of the log alone, one
transaction at a time across all daemons: store/postgres/append.py), a projector (the derived
tables brought up to the log behind the appends: store/postgres/projector.py), a reader (queries,
replay, verify, the session tables: store/postgres/reads.py, store/postgres/verify.py,
store/postgres/projections.py), a searcher (store/postgres/search.py) and a listener,
which LISTENs for the notice every append sends and tells the daemon to read what other
daemons committed.

A connection that breaks (the server restarted, a backend was terminated, the network went)
is opened again on next use (store/postgres/connect.py); while the server cannot be reached every
call fails at once with :class:`~store.errors.StoreUnavailable` (hooks then spool). An append
that lost its connection under it is retried for :data:`APPEND_RETRY_S` with the same
idempotency token, so a commit whose acknowledgement was lost is answered, not written again.

psycopg is imported by this package only: the daemon loads it when ``store.backend`` is
``postgres``, and ``pip install 'toka[postgres]'`` provides it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import psycopg

from store.base import AppendResult, ProgressCallback, Stats, VerifyReport
from store.cursors import READ as READ_CURSOR
from store.cursors import SAVE as SAVE_CURSOR
from store.errors import StoreError, StoreUnavailable, UsageError
from store.events import NewEvent, now_us
from store.merkle import Frontier, LogLeaf, Node, SignedRoot
from store.merkle_check import TreeReport
from store.postgres.append import CHANNEL, LogEnd, append_batch, forget_old_batches
from store.postgres.connect import FIRST_BACKOFF_S, Link, Reachability, first_line, reusable, server_cause
from store.postgres.projections import projections_disagree, read_sessions
from store.postgres.projector import behind, catch_up, rebuild_projections, rebuild_search_index
from store.postgres.reads import fetch_json, fetch_rows, get_event, get_payload, read_stats
from store.postgres.schema import migrate
from store.postgres.search import hits, search_sql
from store.postgres.tree import LogTree, check_tree
from store.postgres.usage import read_usage, sum_usage_rows
from store.postgres.vectors import PostgresVectors
from store.postgres.verify import verify_log
from store.retention import Collected, Pruned
from store.rows import SELECT
from store.search import SearchHit, SearchQuery
from store.sql import Parts, SqlStore
from store.url import scrubbed
from store.vectors import VectorIndex

T = TypeVar("T")
log = logging.getLogger("toka.store")

APPEND_RETRY_S = 3.0
# How often the listener reads the log even without a notice: a notice is lost when the
# listener's own connection breaks, and this bounds how late a missed event shows.
POLL_S = 2.0
# The idempotency records of old appends are dropped once every this many appends.
FORGET_EVERY = 1000


class PostgresStore(SqlStore):
    shared = True
    # Each a coroutine of one connection, the statements in psycopg's dialect (store/query.py).
    parts = Parts(
        select=SELECT,
        fetch_rows=fetch_rows,
        fetch_json=fetch_json,
        get_event=get_event,
        get_payload=get_payload,
        read_sessions=read_sessions,
        read_usage=read_usage,
        sum_usage_rows=sum_usage_rows,
        rebuild_projections=rebuild_projections,
        rebuild_search_index=rebuild_search_index,
    )

    def __init__(self, url: str, durability: str = "normal") -> None:
        self.url = url
        self.reach = Reachability(url)
        # durability "full" insists on synchronous commits; "normal" keeps the server's own
        # setting (PostgreSQL's default is synchronous too), which is its administrator's call.
        sync = "-c synchronous_commit=on" if durability == "full" else ""
        self._writer = Link(url, "writer", self.reach, sync)
        self._reader = Link(url, "reader", self.reach)
        # Searches on a connection of their own: a long one holds up the next search, not every read.
        self._searcher = Link(url, "searcher", self.reach)
        self._vectors = PostgresVectors(self._write, self._read, self._search_on_own_connection, self.project)
        # The derived tables applied on a connection of their own (store/postgres/projector.py):
        # appends never wait for them, nor they for an append riding out an outage.
        self._projector = Link(url, "projector", self.reach)
        self._projecting = asyncio.Lock()
        # One transaction at a time on the writer: two calls interleaving their statements on one
        # connection would nest one transaction in the other, and both would fail.
        self._writing = asyncio.Lock()
        self._log_end = LogEnd()  # what this daemon's last append left, for sending the next at once
        self._appends = 0
        self._unprojected = 0  # events this daemon committed since it last applied the derived tables
        self._tree = LogTree()
        self._tree_built: asyncio.Task[Frontier] | None = None

    @property
    def location(self) -> str:
        return self.reach.location

    @classmethod
    async def open(cls, url: str, durability: str = "normal") -> PostgresStore:
        """Connect and bring the schema up to date; StoreUnavailable when the server cannot be
        reached, SchemaTooNew when a newer toka wrote it."""
        store = cls(url, durability)
        try:
            # An upgraded database holds events a projection added by the upgrade has never seen:
            # the last step refills them from the log, in its transaction (as SQLite does).
            await store._write(migrate, None, rebuild_projections)
            await store.project()  # what was committed but not yet applied when the last daemon ended
            if (found := await store._read(projections_disagree)) is not None:
                log.warning("the session tables disagree with the log (%s): rebuilding them", found)
                await store._write(rebuild_projections)
        except StoreUnavailable as exc:  # the daemon does not start: the usual hint would say it reconnects
            await store.close()
            raise StoreUnavailable(
                exc.message,
                "start the database server, or correct store.url (toka config set store.url ...), then run"
                " the command again; hooks spool what they record until a daemon runs",
            ) from None
        except BaseException:
            await store.close()  # a refused or failed open leaves no connection behind
            raise
        return store

    async def _run(
        self, link: Link, fn: Callable[..., Awaitable[T]], *args: Any, conn: psycopg.AsyncConnection[Any] | None = None
    ) -> T:
        conn = conn or await link.get()
        try:
            result = await fn(conn, *args)
        except psycopg.Error as exc:
            if not reusable(conn):
                # Whatever the error says, the connection is unusable (a backend ended mid-pipeline
                # may surface as an odd error of the next statement): replaced, and the call
                # reported as a lost connection, which an append retries with its token.
                link.lost(server_cause(exc))
                with contextlib.suppress(psycopg.Error):
                    await conn.close()
                raise self.reach.unavailable() from None
            raise StoreError(f"database error on {self.location}: {scrubbed(first_line(exc), self.url)}") from None
        if not self.reach.reachable:
            # The server answered: whichever connection broke last (the projector's, say, between
            # two batches), the database is reachable, though none had to be opened again.
            self.reach.reached()
        return result

    async def _read(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        return await self._run(self._reader, fn, *args)

    async def _write(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        async with self._writing:
            return await self._run(self._writer, fn, *args)

    async def append(self, batch: Sequence[NewEvent], *, alone: bool = False) -> list[AppendResult]:
        token = uuid.uuid4().hex
        deadline = time.monotonic() + APPEND_RETRY_S
        retry = False
        async with self._writing:
            # No connection: StoreUnavailable at once (a hook spools), as nothing of the append was sent.
            conn: psycopg.AsyncConnection[Any] | None = await self._writer.get()
            while True:
                if conn is not None:
                    try:
                        results = await self._run(
                            self._writer, append_batch, list(batch), token, retry, self._log_end, conn=conn
                        )
                        break
                    except StoreUnavailable:
                        retry = True  # it broke under the append: committed or not, the token tells
                wait = max(0.0, self._writer.retry_at - time.monotonic())
                if time.monotonic() + wait > deadline:
                    raise self.reach.unavailable()
                await asyncio.sleep(wait)
                try:
                    conn = await self._writer.get()
                except StoreUnavailable:
                    conn = None
        self._appends += 1
        self._unprojected += sum(1 for result in results if result.created)
        if self._appends % FORGET_EVERY == 0:
            await self._write(forget_old_batches)
        return results

    async def follow(self, changed: Callable[[], None], reconnected: Callable[[], None]) -> None:
        """Call ``changed()`` whenever another daemon may have committed: on each notice not sent
        by this store's own writer, every POLL_S, and after the listener connects;
        ``reconnected()`` after it connects again following an outage. Runs until cancelled."""
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
                        async for notice in conn.notifies(timeout=POLL_S):
                            # A notice of this daemon's own writer is of a commit its group
                            # committer hands over itself (daemon/server/follow.py): a read for
                            # it would find nothing new, and hold up the next append's hand-over.
                            if notice.pid != self._writer.backend_pid():
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

    def unprojected(self) -> int:
        return self._unprojected

    async def project(self) -> None:
        """Bring the derived tables to the log's end (store/postgres/projector.py): every append
        acknowledged so far, this daemon's and the others', is in them when it returns. A read of
        them calls it first; the daemon's projector, behind this daemon's commits."""
        own, self._unprojected = self._unprojected, 0
        async with self._projecting:
            # Behind for sure when this daemon committed events since (unless another daemon
            # applied them meanwhile, which catch_up then finds): no need to ask.
            if own or await self._read(behind):
                await self._run(self._projector, catch_up)

    async def present(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` the log holds: one indexed lookup for them all."""
        rows = await self._read(fetch_rows, "SELECT id FROM events WHERE id = ANY(?)", (list(ids),))
        return {row[0] for row in rows}

    async def verify(self, session: str | None = None, progress: ProgressCallback | None = None) -> VerifyReport:
        await self.project()  # the session tables' heads are checked against the log
        return await self._read(verify_log, session, progress)

    async def stats(self) -> Stats:
        await self.project()
        return await self._read(read_stats)

    # The tree is this daemon's, in memory, grown from what it reads (store/postgres/tree.py).

    async def tree(self) -> Frontier | None:
        # The first call reads the whole log in the background, so that a daemon on a long log
        # answers at once; a head signed meanwhile covers what was read so far.
        if self._tree_built is None:
            self._tree_built = asyncio.create_task(self._read(self._tree.grow), name="tree")
            self._tree_built.add_done_callback(_retrieved)
        if not self._tree_built.done():
            return self._tree.frontier
        return await self._read(self._tree.grow)

    async def check_tree(self, heads: Sequence[SignedRoot], progress: ProgressCallback | None = None) -> TreeReport:
        return await self._read(check_tree, list(heads), progress)

    async def tree_nodes(self, nodes: Sequence[Node]) -> dict[Node, bytes]:
        raise self._no_proofs()

    async def tree_leaf(self, event_id: str) -> LogLeaf:
        raise self._no_proofs()

    def _no_proofs(self) -> UsageError:
        return UsageError(
            f"the log at {self.location} keeps no stored Merkle tree, which proofs are made from",
            "`toka verify` checks it against this daemon's signed heads; proofs are made on a SQLite log",
        )

    async def disk_bytes(self) -> int:
        rows = await self._read(fetch_rows, "SELECT pg_database_size(current_database())", ())
        return int(rows[0][0])

    async def cursor(self, name: str) -> str | None:
        rows = await self._read(fetch_rows, READ_CURSOR, (name,))
        return str(rows[0][0]) if rows else None

    async def save_cursor(self, name: str, value: str) -> None:
        await self._write(fetch_rows, SAVE_CURSOR + " RETURNING name", (name, value, now_us()))

    async def _search_on_own_connection(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        return await self._run(self._searcher, fn, *args)

    def vectors(self) -> VectorIndex:
        return self._vectors

    async def search(self, query: SearchQuery) -> list[SearchHit]:
        checked = query.checked()
        await self.project()
        found: dict[int, SearchHit] = {}
        offset = 0
        while len(found) < checked.limit:  # more than one page only when a partial text did not match
            sql, params = search_sql(checked, offset)
            rows = await self._run(self._searcher, fetch_rows, sql, params)
            for hit in await asyncio.to_thread(hits, checked, rows):  # snippets: off the event loop
                found.setdefault(hit.seq, hit)
            if len(rows) < checked.limit:
                break
            offset += len(rows)
        return list(found.values())[: checked.limit]

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
        if self._unprojected:
            with contextlib.suppress(StoreError):  # any daemon, or this one's next start, applies them
                await self.project()
        if self._tree_built is not None:
            self._tree_built.cancel()
        await self._searcher.cancel()  # a search running would keep its connection until it ends
        await self._writer.close()
        await self._reader.close()
        await self._searcher.close()
        await self._projector.close()


def _retrieved(task: asyncio.Task[Frontier]) -> None:
    """A background read of the tree that failed (the server went away) is logged; the next
    :meth:`PostgresStore.tree` reads on from where it stopped."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.warning("reading the log for its tree stopped: %s", exc)
