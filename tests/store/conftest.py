"""Fixtures for the store suite: one set of tests, run against every backend (SQLite, memory, and
PostgreSQL on the run's server: each store a database of its own, dropped when the test ends).

There is no pytest-asyncio here, on purpose: an ``async def`` test in this folder runs on the
``loop`` fixture's event loop through the ``pytest_pyfunc_call`` hook below, and the fixtures that
open stores use that same loop, so a store is opened, used and closed on one loop.
"""

from __future__ import annotations

import asyncio
import inspect
import secrets
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import postgres_server
import psycopg
import pytest
from psycopg import sql

from store.base import EventStore
from store.ephemeral import EphemeralStore
from store.postgres.store import PostgresStore
from store.sqlite.connect import Durability
from store.sqlite.store import SqliteStore

BACKENDS = ("sqlite", "memory", "postgres")


@pytest.fixture(autouse=True)
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """The event loop an async test (and the stores it uses) runs on."""
    loop = asyncio.new_event_loop()
    yield loop
    loop.run_until_complete(loop.shutdown_asyncgens())
    # When aiosqlite fails to connect (a test of a bad path) it stops its worker thread without
    # waiting; that thread then reports to this loop, so let it finish before the loop closes.
    for thread in threading.enumerate():
        if thread.name.endswith("(_connection_worker_thread)"):
            thread.join(timeout=5)
    loop.close()


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    names = inspect.signature(pyfuncitem.obj).parameters
    loop: asyncio.AbstractEventLoop = pyfuncitem.funcargs["loop"]
    loop.run_until_complete(pyfuncitem.obj(**{name: pyfuncitem.funcargs[name] for name in names}))
    return True


class Backend:
    """Opens fresh stores of one backend kind and closes them all when the test ends.

    ``admin_url`` (postgres only) is the run's server: each store gets a new database on it, which
    :meth:`close_all` drops."""

    def __init__(self, name: str, directory: Path, admin_url: str | None = None) -> None:
        self.name = name
        self.directory = directory
        self.admin_url = admin_url
        self.opened: list[EventStore] = []
        self.databases: list[str] = []

    async def open(self) -> EventStore:
        """A new, empty store (for SQLite a new file, for PostgreSQL a new database), e.g. the
        target of an import."""
        store: EventStore
        if self.name == "memory":
            store = EphemeralStore()
        elif self.name == "postgres":
            from store.postgres.store import PostgresStore

            assert self.admin_url is not None
            name = postgres_server.DATABASE_PREFIX + secrets.token_hex(8)
            await self._admin(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            self.databases.append(name)
            store = await PostgresStore.open(postgres_server.with_dbname(self.admin_url, name))
        else:
            store = await SqliteStore.open(self.directory / f"toka-{len(self.opened)}.db")
        self.opened.append(store)
        return store

    async def _admin(self, statement: sql.Composed) -> None:
        assert self.admin_url is not None
        async with await psycopg.AsyncConnection.connect(self.admin_url, autocommit=True) as admin:
            await admin.execute(statement)

    async def close_all(self) -> None:
        try:
            for store in self.opened:
                await store.close()
        finally:
            for name in self.databases:
                await self._admin(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path, loop: asyncio.AbstractEventLoop) -> Iterator[Backend]:
    # The server is asked for only here: without one, only the postgres tests skip.
    admin_url = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
    backend = Backend(request.param, tmp_path, admin_url)
    yield backend
    loop.run_until_complete(backend.close_all())


@pytest.fixture
def store(backend: Backend, loop: asyncio.AbstractEventLoop) -> EventStore:
    """An empty store of each backend in turn."""
    return loop.run_until_complete(backend.open())


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where an SQLite-only test keeps its database file."""
    return tmp_path / "toka.db"


@pytest.fixture
def sqlite_store(db_path: Path, loop: asyncio.AbstractEventLoop) -> Iterator[SqliteStore]:
    """An empty SQLite store at ``db_path``, for what only the SQLite backend has (files, pragmas)."""
    store = loop.run_until_complete(SqliteStore.open(db_path))
    yield store
    loop.run_until_complete(store.close())


@asynccontextmanager
async def _opened(path: Path, durability: Durability = "normal", merkle: bool = True) -> AsyncIterator[SqliteStore]:
    store = await SqliteStore.open(path, durability, merkle)
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
def open_store(
    postgres_database: str, loop: asyncio.AbstractEventLoop
) -> Iterator[Callable[[], Awaitable[PostgresStore]]]:
    """Open a PostgresStore on the test's database, as one more daemon would; all closed at the end."""
    opened: list[PostgresStore] = []

    async def open_() -> PostgresStore:
        store = await PostgresStore.open(postgres_database)
        opened.append(store)
        return store

    yield open_
    for store in opened:
        loop.run_until_complete(store.close())


@pytest.fixture
def open_sqlite() -> Callable[..., AbstractAsyncContextManager[SqliteStore]]:
    """``async with open_sqlite(path) as store``: for tests that close the file and come back."""
    return _opened
