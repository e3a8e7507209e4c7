"""Fixtures for the store suite: one set of tests, run against every backend.

There is no pytest-asyncio here, on purpose: an ``async def`` test in this folder runs on the
``loop`` fixture's event loop through the ``pytest_pyfunc_call`` hook below, and the fixtures that
open stores use that same loop, so a store is opened, used and closed on one loop.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest

from store.base import EventStore
from store.ephemeral import EphemeralStore
from store.sqlite import Durability, SqliteStore

BACKENDS = ("sqlite", "memory")


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
    """Opens fresh stores of one backend kind and closes them all when the test ends."""

    def __init__(self, name: str, directory: Path) -> None:
        self.name = name
        self.directory = directory
        self.opened: list[EventStore] = []

    async def open(self) -> EventStore:
        """A new, empty store (for SQLite a new file), e.g. the target of an import."""
        store: EventStore
        if self.name == "memory":
            store = EphemeralStore()
        else:
            store = await SqliteStore.open(self.directory / f"toka-{len(self.opened)}.db")
        self.opened.append(store)
        return store

    async def close_all(self) -> None:
        for store in self.opened:
            await store.close()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path, loop: asyncio.AbstractEventLoop) -> Iterator[Backend]:
    backend = Backend(request.param, tmp_path)
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
async def _opened(path: Path, durability: Durability = "normal") -> AsyncIterator[SqliteStore]:
    store = await SqliteStore.open(path, durability)
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
def open_sqlite() -> Callable[..., AbstractAsyncContextManager[SqliteStore]]:
    """``async with open_sqlite(path) as store``: for tests that close the file and come back."""
    return _opened
