"""A full disk: appends fail with a clear error and store nothing, reads go on, nothing is
corrupt, and appends work again once there is room. The disk is made "full" with SQLite's own
page limit on the writer connection, which fails a write exactly as a full filesystem does
(SQLITE_FULL)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from store.base import EventQuery
from store.errors import StoreError
from store.events import NewEvent
from store.sqlite.store import SqliteStore


def _batch(session: str, count: int, size: int) -> list[NewEvent]:
    return [NewEvent(session, "tool.result", {"n": i, "output": f"{i:08d}" * (size // 8)}) for i in range(count)]


def _nearly_full(db: sqlite3.Connection) -> None:
    """Cap the database two pages above its size: the next large write does not fit."""
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages + 2}")


async def _call(store: SqliteStore, fn: object) -> None:
    await store._write(fn)  # type: ignore[arg-type]  # the writer's own connection: the one that fills


def test_a_full_disk_fails_appends_clearly_and_loses_nothing(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = await SqliteStore.open(tmp_path / "toka.db")
        try:
            await store.append(_batch("s", 20, 200))
            await _call(store, _nearly_full)
            with pytest.raises(StoreError) as caught:
                await store.append(_batch("s", 50, 20_000))
            assert "is full" in caught.value.message and caught.value.hint == "free some space and retry"
            # Reads go on, and the failed batch left nothing behind.
            assert len(await store.query(EventQuery(session="s"))) == 20
            assert (await store.verify()).ok
            # Room again: appends work, the chain goes on from where it was.
            await _call(store, lambda db: db.execute("PRAGMA max_page_count = 2147483646"))
            results = await store.append(_batch("s", 50, 20_000))
            assert all(r.created for r in results)
            assert len(await store.query(EventQuery(session="s"))) == 70
            assert (await store.verify()).ok
        finally:
            await store.close()
        reopened = await SqliteStore.open(tmp_path / "toka.db")
        try:
            assert (await reopened.verify()).ok
        finally:
            await reopened.close()

    asyncio.run(scenario())
