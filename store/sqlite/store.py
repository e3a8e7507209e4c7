"""The SQLite backend: one WAL database file, written through aiosqlite.

Every operation is one plain function run on the connection's own thread, so a batch of a
thousand events costs one thread hop, not a thousand: aiosqlite's public methods each cost a
hop, and the write path here would need ten of them per batch. There are two connections, so
a long read (replay, verify) never holds up appends: WAL lets the reader see a consistent
snapshot while the writer commits.

This module is the store itself: its connections, the WAL's checkpoints, and each operation run
in one hop (store/sqlite/hop.py runs them; a small append commits on the caller's thread while
the writer's thread is idle, see ``INLINE_EVENTS``); what a connection sets and checks when it
opens is in store/sqlite/connect.py, what the store knows of its file's soundness in
store/sqlite/integrity.py. The operations live
apart, each in the module named as the PostgreSQL backend's that does the same: the append path
in store/sqlite/append.py, the session tables in store/sqlite/projections.py, the usage
projection in store/sqlite/usage.py, search in store/sqlite/search.py, verify in
store/sqlite/verify.py, the other reads in store/sqlite/reads.py, and retention (SQLite's only)
in store/sqlite/retention.py; what they share with PostgreSQL's is store/rows.py, and the
methods that only run one of them are store/sql.py's :class:`SqlStore`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from store.base import (
    AppendResult,
    DatabaseCheck,
    Problem,
    ProgressCallback,
    Stats,
    VerifyReport,
)
from store.cursors import read_cursor, save_cursor
from store.damage import Damage
from store.errors import DatabaseDamaged, StoreError, TokaError
from store.events import Event, NewEvent
from store.merkle import Frontier, LogLeaf, Node, SignedRoot
from store.merkle_check import TreeReport
from store.requester import RequestAbandoned, requester_gone
from store.retention import Collected, Pruned
from store.rows import SELECT_INLINE
from store.search import SearchHit, SearchQuery
from store.sql import Parts, SqlStore
from store.sqlite.append import append_batch
from store.sqlite.connect import Durability, describe, prepare_reader, prepare_writer
from store.sqlite.health import disk_bytes
from store.sqlite.hop import here, on_thread, unless_gone
from store.sqlite.integrity import Integrity
from store.sqlite.projections import read_sessions, rebuild_projections
from store.sqlite.projector import project_events
from store.sqlite.reads import fetch_json, fetch_rows, get_event, get_payload, read_stats, read_totals
from store.sqlite.retention import collect_garbage, prune_session
from store.sqlite.search import rebuild_search_index
from store.sqlite.searcher import Searches
from store.sqlite.tree import Tree, catch_up, check_tree, find_leaf, node_hashes
from store.sqlite.usage import read_usage, sum_usage_rows
from store.sqlite.vectors import SqliteVectors
from store.sqlite.verify import verify_chain
from store.sqlite.wal import wal_checkpoint, wal_held_bytes
from store.tip import Tip, log_tip
from store.vectors import VectorIndex

T = TypeVar("T")

# WAL size at which a background checkpoint starts: SQLite's own default, 1000 pages of 4 KiB;
# and the size past which the background checkpoint makes the writer wait while it catches up
# (RESTART), rather than copy what it can beside it (PASSIVE). The file is kept at up to the
# latter when the WAL starts over (store/sqlite/connect.py, WAL_KEEP_BYTES).
CHECKPOINT_WAL_BYTES = 4 * 1024 * 1024
CATCH_UP_WAL_BYTES = 16 * 1024 * 1024
WAL_LOOK_EVERY = 32
# Appends of at most this many events, with no other append waiting (``alone``), commit on the
# event loop's thread when the writer's thread is idle (durability normal only): a one-event
# commit takes about as long as the two thread hand-offs it would otherwise cost, and a hook or a
# lone client waits for both. While it commits the loop serves nothing else: a few hundred µs.
INLINE_EVENTS = 8
# The most committed events held for the derived tables before an append applies them itself: a
# store used without the daemon's projector (a build of a large log, a copy) keeps its memory
# bounded, and one transaction of them stays short.
UNPROJECTED_MAX = 10_000


class SqliteStore(SqlStore):
    # Each run on a connection's thread in one hop (store/sqlite/hop.py).
    parts = Parts(
        select=SELECT_INLINE,
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

    def __init__(
        self,
        path: Path,
        writer: aiosqlite.Connection,
        reader: aiosqlite.Connection,
        checkpointer: aiosqlite.Connection,
        integrity: Integrity | None = None,
        tree: Tree | None = None,
    ) -> None:
        self.path = path
        # The damage seen and the tip recorded (store/sqlite/integrity.py).
        self._integrity = integrity or Integrity(path)
        self._tree = tree  # the log's Merkle tree as the writer keeps it; None: not kept
        self._writer = writer
        self._reader = reader
        self._checkpointer = checkpointer
        self._searches = Searches(path, self._integrity)
        self._vectors = SqliteVectors(self._write, self._read, self._searches.run, self.project)
        self._wal_index = Path(f"{path}-shm")
        self._checkpointing: asyncio.Task[None] | None = None
        self._catch_up_running = False  # a RESTART checkpoint holds the write lock
        self._appends = 0
        self._closed = False
        self._writer_jobs = 0  # queued or running on the writer's thread
        # Writes so far, and the totals read after the last: only this store writes to its file.
        self._writes = 0
        self._totals: tuple[int, tuple[int, int]] | None = None
        self._inline_events = 0  # appends of at most this many events commit on the event loop
        # Committed, not yet applied to the derived tables (store/sqlite/projector.py), in seq order.
        self._unprojected: list[Event] = []
        self._projecting = asyncio.Lock()

    @property
    def location(self) -> str:
        return str(self.path)

    @classmethod
    async def open(cls, path: Path | str, durability: Durability = "normal", merkle: bool = True) -> SqliteStore:
        """The store at ``path``; ``merkle``: keep the log's Merkle tree (store/sqlite/tree.py),
        bringing it up to the log first when it lags."""
        path = Path(path)
        if not path.parent.is_dir():
            raise StoreError(f"the data directory {path.parent} does not exist", "create it or set TOKA_HOME")
        connections: list[aiosqlite.Connection] = []
        integrity = Integrity(path)
        try:
            for role in ("writer", "reader", "checkpointer"):
                try:
                    conn = await aiosqlite.connect(path, isolation_level=None, check_same_thread=False)
                except sqlite3.Error as exc:  # a directory, a file we may not open, ...
                    raise describe(path, exc) from None
                connections.append(conn)
                prepare = prepare_writer if role == "writer" else prepare_reader
                await on_thread(conn, path, prepare, durability, seen=integrity)
        except BaseException:
            for conn in connections:
                await conn.close()
            raise
        store = cls(path, connections[0], connections[1], connections[2], integrity)
        # With fsync on every commit (durability full) a commit is too long to hold the loop for.
        store._inline_events = INLINE_EVENTS if durability == "normal" else 0
        with contextlib.suppress(DatabaseDamaged):  # it opens damaged: reads go on, writes are refused
            await store._read(integrity.opened)
        if merkle:
            try:
                store._tree = await store._open_tree()
            except BaseException:
                await store.close()
                raise
        return store

    async def _open_tree(self) -> Tree | None:
        """The tree brought up to the log (read as it stands when the database is damaged); None
        when the database has none or SQLite reports it damaged."""
        tree = Tree()
        fit = self._integrity.damage is None
        try:
            kept = await on_thread(self._writer, self.path, catch_up, tree, fit, seen=self._integrity)
        except DatabaseDamaged:
            return None
        return tree if kept else None

    async def _write(self, fn: Callable[..., T], *args: Any) -> T:
        self._integrity.refuse_writes()
        self._writer_jobs += 1
        try:
            return await on_thread(self._writer, self.path, fn, *args, seen=self._integrity)
        finally:
            self._writer_jobs -= 1
            self._writes += 1

    async def _read(self, fn: Callable[..., T], *args: Any) -> T:
        gone = requester_gone.get()
        if gone is not None:  # store/requester.py: skipped when its turn comes and no one waits
            if gone():
                raise RequestAbandoned()
            return await on_thread(self._reader, self.path, unless_gone, gone, fn, *args, seen=self._integrity)
        return await on_thread(self._reader, self.path, fn, *args, seen=self._integrity)

    async def append(self, batch: Sequence[NewEvent], *, alone: bool = False) -> list[AppendResult]:
        wal_bytes = self._wal_bytes()
        # A catching-up checkpoint holds the write lock: a commit on the loop would block it.
        free = not self._writer_jobs and not self._catch_up_running
        if alone and len(batch) <= self._inline_events and free:
            # Nothing is queued on the writer's thread, so its connection is free: committing here
            # spares the two thread hand-offs that cost a lone writer more than a small commit
            # does. Writers that come together are better served by the thread: the event loop
            # reads the next group's requests while this one commits.
            self._integrity.refuse_writes()
            self._writes += 1  # no await until the commit is done: no totals read comes in between
            results = here(self._writer, self.path, append_batch, list(batch), seen=self._integrity)
        else:
            results = await self._write(append_batch, list(batch))
        if created := [r.event for r in results if r.created]:
            self._integrity.committed(Tip(created[-1].seq, created[-1].id))
            self._unprojected += created
            if len(self._unprojected) >= UNPROJECTED_MAX:  # nothing applies them (no reads, no projector): apply now
                await self.project()
        if wal_bytes >= CHECKPOINT_WAL_BYTES:
            self._checkpoint_in_background(catch_up=wal_bytes >= CATCH_UP_WAL_BYTES)
        return results

    def unprojected(self) -> int:
        return len(self._unprojected)

    async def project(self) -> None:
        """Apply what was committed so far to the derived tables, in one transaction on the
        writer's connection (store/sqlite/projector.py). A read of those tables calls it first, so
        it sees every append acknowledged before it; the daemon's projector calls it behind the
        commits. On a database found damaged (writes refused) the tables stay as they are."""
        if not self._unprojected and not self._projecting.locked():
            return
        async with self._projecting:  # one under way holds events taken from the list: wait for it
            events, self._unprojected = self._unprojected, []
            if not events or self._integrity.damage is not None:
                self._unprojected = events + self._unprojected
                return
            try:
                await self._write(project_events, events, self._tree)
            except BaseException:
                self._unprojected = events + self._unprojected  # applied at the next call, or at the next open
                raise

    def damage(self) -> Damage | None:
        return self._integrity.damage

    def mark_damaged(self, reason: str) -> None:
        self._integrity.mark(reason)

    async def check_database(self, deep: bool = False) -> DatabaseCheck:
        return await self._read(self._integrity.check, deep)

    def _wal_bytes(self) -> int:
        """What the WAL holds, looked at every WAL_LOOK_EVERY appends (a read of its index costs
        three system calls)."""
        self._appends += 1
        if self._appends % WAL_LOOK_EVERY:
            return 0
        return wal_held_bytes(self._wal_index)

    def _checkpoint_in_background(self, catch_up: bool) -> None:
        """Copy the WAL back into the database on a connection of its own.

        SQLite's automatic checkpoint (off on the writer) runs inside whichever commit crosses
        its threshold, fsyncs included, and makes that append a hundred times slower than the
        rest. A PASSIVE checkpoint on another connection never blocks the writer, and once it
        has copied everything the writer starts the WAL from the top again. Under a write load
        that never pauses it may never catch up, so past CATCH_UP_WAL_BYTES (``catch_up``) the
        checkpoint is a RESTART one: it holds the write lock until it has copied everything and
        the next commit starts the WAL over. The writer waits for the lock meanwhile, on its own
        thread (no commit is made on the event loop while it runs), and never checkpoints itself.
        """
        if self._checkpointing is None or self._checkpointing.done():
            mode = "RESTART" if catch_up else "PASSIVE"
            self._checkpointing = asyncio.create_task(self._checkpoint(mode), name="wal-checkpoint")

    async def _checkpoint(self, mode: str) -> None:
        self._catch_up_running = mode == "RESTART"
        try:
            await on_thread(self._checkpointer, self.path, wal_checkpoint, mode)
        except TokaError as exc:  # the next append tries again; the commits themselves are safe
            logging.getLogger("toka.store").warning("WAL checkpoint failed: %s", exc.message)
        finally:
            self._catch_up_running = False

    async def totals(self) -> tuple[int, int]:
        await self.project()
        writes = self._writes  # before the read: a write that ends meanwhile makes the next call read again
        if self._totals is None or self._totals[0] != writes:
            self._totals = (writes, await self._read(read_totals))  # one row of the sessions table's sums
        return self._totals[1]

    async def verify(self, session: str | None = None, progress: ProgressCallback | None = None) -> VerifyReport:
        await self.project()  # the session tables' heads are checked against the log
        report_progress = None
        if progress is not None:
            loop = asyncio.get_running_loop()
            report_progress = lambda done, total: loop.call_soon_threadsafe(progress, done, total)  # noqa: E731
        try:
            return await self._read(verify_chain, session, report_progress)
        except DatabaseDamaged as exc:  # a page of the log that SQLite cannot read: that is the finding
            reason = exc.message if (damage := self._integrity.damage) is None else damage.reason
            problem = Problem(0, "", session or "", "database", f"the log cannot be read to its end: {reason}")
            return VerifyReport(session, 0, (problem,), 1)

    async def stats(self) -> Stats:
        await self.project()
        return await self._read(read_stats, self.path)

    async def tree(self) -> Frontier | None:
        await self.project()
        return None if self._tree is None else self._tree.frontier

    async def tree_nodes(self, nodes: Sequence[Node]) -> dict[Node, bytes]:
        await self.project()
        return await self._read(node_hashes, list(nodes))

    async def tree_leaf(self, event_id: str) -> LogLeaf:
        await self.project()
        return await self._read(find_leaf, event_id)

    async def check_tree(
        self, heads: Sequence[SignedRoot], progress: ProgressCallback | None = None
    ) -> TreeReport | None:
        if self._tree is None:
            return None
        await self.project()
        return await self._read(check_tree, list(heads), self._threadsafe(progress))

    def _threadsafe(self, progress: ProgressCallback | None) -> ProgressCallback | None:
        """``progress`` called on the event loop from the connection's thread."""
        if progress is None:
            return None
        loop = asyncio.get_running_loop()

        def report(done: int, total: int) -> None:
            loop.call_soon_threadsafe(progress, done, total)

        return report

    async def disk_bytes(self) -> int:
        return disk_bytes(self.path)

    async def cursor(self, name: str) -> str | None:
        return await self._read(read_cursor, name)

    async def save_cursor(self, name: str, value: str) -> None:
        await self._write(save_cursor, name, value)

    async def search(self, query: SearchQuery) -> list[SearchHit]:
        checked = query.checked()
        await self.project()
        return await self._searches.search(checked)  # on a connection of their own

    def vectors(self) -> VectorIndex:
        return self._vectors

    async def prune(self, session: str, before: int, dry_run: bool = False) -> Pruned | None:
        await self.project()  # a prune recounts its session from the tables' own rows
        pruned = await self._write(prune_session, session, before, dry_run)
        if pruned is not None and not dry_run and (tip := await self._read(log_tip)) is not None:
            self._integrity.committed(tip)  # the checkpoint may have taken the last event's seq
        return pruned

    async def collect_garbage(self, keep: Sequence[str] = (), dry_run: bool = False) -> Collected:
        return await self._write(collect_garbage, list(keep), dry_run)

    async def vacuum(self) -> None:
        await self._write(lambda db: db.execute("VACUUM"))
        await self.checkpoint()  # VACUUM writes the whole file through the WAL

    async def checkpoint(self) -> None:
        await self._write(lambda db: db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())

    async def close(self) -> None:
        """Checkpoint and close; a second call does nothing (the daemon closes the store on every
        way out, a clean shutdown included)."""
        if self._closed:
            return
        self._closed = True
        await self._searches.close()  # a search running is interrupted: it would hold up the close
        try:
            await self.project()
            if self._checkpointing is not None:
                await self._checkpointing
            await self.checkpoint()
        except TokaError:
            pass  # a full disk or read-only file must not keep the daemon from stopping
        finally:
            for conn in (self._checkpointer, self._reader, self._writer):
                await conn.close()
            self._integrity.close()
