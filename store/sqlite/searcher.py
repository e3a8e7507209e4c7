"""The SQLite backend's searches, on a connection of their own (store/sqlite/search.py makes the
statement and the hits): a search that takes long holds up the searches after it, never the
store's other reads, and one cancelled is interrupted where it runs.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from store.requester import RequestAbandoned, requester_gone
from store.search import SearchHit, SearchQuery
from store.sqlite.connect import describe, prepare_reader
from store.sqlite.hop import on_thread
from store.sqlite.integrity import Integrity
from store.sqlite.search import run_search, search_sql

T = TypeVar("T")


class Searches:
    """The connection searches run on, apart from the reader's, opened on the first search: a long
    search holds up the searches after it, never the other reads. A search whose caller is
    cancelled (a shutdown past its deadline) is interrupted where it runs, or not run when its
    turn comes; :meth:`close` interrupts the one running and runs none of those waiting."""

    def __init__(self, path: Path, integrity: Integrity) -> None:
        self.path, self._integrity = path, integrity
        self._conn: aiosqlite.Connection | None = None
        self._opening = asyncio.Lock()
        self._running: object | None = None  # the token of the search on the connection's thread
        self._closed = False

    async def _connection(self) -> aiosqlite.Connection:
        async with self._opening:
            if self._conn is None:
                try:
                    conn = await aiosqlite.connect(self.path, isolation_level=None, check_same_thread=False)
                except sqlite3.Error as exc:
                    raise describe(self.path, exc) from None
                await on_thread(conn, self.path, prepare_reader, "normal", seen=self._integrity)
                self._conn = conn
            return self._conn

    async def search(self, query: SearchQuery) -> list[SearchHit]:
        sql, params, matcher = search_sql(query)
        return await self.run(run_search, sql, params, matcher)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(connection, *args)`` on the searches' connection, after those queued before it."""
        if self._closed:
            raise RequestAbandoned()
        conn = await self._connection()
        token, gone, cancelled = object(), requester_gone.get(), asyncio.Event()

        def run(db: sqlite3.Connection) -> T:
            if cancelled.is_set() or self._closed or (gone is not None and gone()):
                raise RequestAbandoned()
            self._running = token
            try:
                return fn(db, *args)
            finally:
                self._running = None

        try:
            return await on_thread(conn, self.path, run, seen=self._integrity)
        except asyncio.CancelledError:
            cancelled.set()
            if self._running is token:
                conn._conn.interrupt()  # sqlite3's interrupt may be called from any thread
            raise

    async def close(self) -> None:
        """Interrupt the search running, refuse those waiting, close the connection."""
        self._closed = True
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._running is not None:
            conn._conn.interrupt()
        await conn.close()
