"""The SQLite backend's WAL: its file kept when it starts over, what it holds read from its index,
and its checkpoints run beside the writer, never by it."""

from __future__ import annotations

import base64
import os
import sqlite3
from pathlib import Path

from store.events import NewEvent
from store.sqlite.connect import WAL_KEEP_BYTES
from store.sqlite.store import CATCH_UP_WAL_BYTES, CHECKPOINT_WAL_BYTES, WAL_LOOK_EVERY, SqliteStore
from store.sqlite.wal import wal_held_bytes


def _large_events(count: int) -> list[NewEvent]:
    # base64 of random bytes: zlib leaves it about as large as it is
    return [NewEvent("s1", "message", {"text": base64.b64encode(os.urandom(6000)).decode()}) for _ in range(count)]


def _frames(db: sqlite3.Connection) -> int:
    frames: int = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
    return frames


async def test_the_wal_file_is_kept_up_to_the_catch_up_size_when_it_starts_over(sqlite_store: SqliteStore) -> None:
    limit = await sqlite_store._write(lambda db: db.execute("PRAGMA journal_size_limit").fetchone()[0])
    assert limit == WAL_KEEP_BYTES == CATCH_UP_WAL_BYTES
    assert WAL_KEEP_BYTES > CHECKPOINT_WAL_BYTES


async def test_what_the_wal_holds_is_read_from_its_index_not_its_file_size(
    sqlite_store: SqliteStore, db_path: Path
) -> None:
    await sqlite_store.append(_large_events(200))
    wal = Path(f"{db_path}-wal")
    held = wal_held_bytes(Path(f"{db_path}-shm"))
    assert held == wal.stat().st_size  # grown from empty: the file holds nothing else
    await sqlite_store._write(_frames)  # every frame copied: the next commit starts the WAL over
    await sqlite_store.append([NewEvent("s1", "message", {"text": "after"})])
    page = await sqlite_store._write(lambda db: db.execute("PRAGMA page_size").fetchone()[0])
    frames = await sqlite_store._write(_frames)
    assert wal_held_bytes(Path(f"{db_path}-shm")) == 32 + frames * (page + 24)
    assert 0 < 32 + frames * (page + 24) < held // 10  # one small commit's pages, from the top
    assert wal.stat().st_size == held  # the file kept its size


async def test_a_wal_past_the_catch_up_size_is_copied_back_by_the_checkpointer_and_starts_over(
    sqlite_store: SqliteStore, db_path: Path
) -> None:
    # Every WAL_LOOK_EVERY-th append looks; the reader's open snapshot keeps the background PASSIVE
    # checkpoints from finishing, so the WAL grows past the catch-up size.
    async with sqlite_store._reader.execute("BEGIN") as cursor:
        await cursor.execute("SELECT count(*) FROM events")
    rounds = 0
    while wal_held_bytes(Path(f"{db_path}-shm")) < CATCH_UP_WAL_BYTES:
        await sqlite_store.append(_large_events(60))
        rounds += 1
    await sqlite_store._reader.execute("COMMIT")
    for _ in range(WAL_LOOK_EVERY):  # one of these sees the WAL past the catch-up size
        if sqlite_store._checkpointing is not None:
            await sqlite_store._checkpointing
        await sqlite_store.append([NewEvent("s1", "message", {"text": "small"})])
        if wal_held_bytes(Path(f"{db_path}-shm")) < CHECKPOINT_WAL_BYTES:
            break
    assert wal_held_bytes(Path(f"{db_path}-shm")) < CHECKPOINT_WAL_BYTES  # started over
    assert Path(f"{db_path}-wal").stat().st_size <= WAL_KEEP_BYTES  # cut back to the kept size
    stored = await sqlite_store._read(lambda db: db.execute("SELECT count(*) FROM events").fetchone()[0])
    assert stored == rounds * 60 + _ + 1
