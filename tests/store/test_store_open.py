"""Opening an SQLite store: what it refuses (leaving the file as it was), and how it writes."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, closing
from pathlib import Path

import pytest

from store.base import EventQuery
from store.errors import SchemaTooNew, StoreError
from store.events import NewEvent
from store.sqlite.connect import BUSY_TIMEOUT_MS
from store.sqlite.store import SqliteStore

OpenSqlite = Callable[..., AbstractAsyncContextManager[SqliteStore]]


def _file_modes_bind_us() -> bool:
    """Whether a directory without write permission keeps this process out (not so for root)."""
    with tempfile.TemporaryDirectory() as scratch:
        locked = Path(scratch, "locked")
        locked.mkdir(mode=0o500)
        try:
            (locked / "probe").touch()
        except PermissionError:
            return True
        finally:
            locked.chmod(0o700)
        return False


needs_file_modes = pytest.mark.skipif(
    not _file_modes_bind_us(),
    reason="this process writes through file modes (root, or CAP_DAC_OVERRIDE), so chmod cannot"
    " make a read-only directory here; run the suite as an ordinary user to cover it",
)


def snapshot(directory: Path) -> dict[str, str]:
    """Every file in the directory and the hash of its bytes."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in directory.iterdir() if p.is_file()}


@pytest.mark.parametrize(
    "content",
    [os.urandom(8192), b"not a database, just some notes\n" * 200, b"short text\n"],
    ids=["random bytes", "text", "short text"],
)
async def test_a_file_that_is_not_sqlite_is_refused_and_left_untouched(db_path: Path, content: bytes) -> None:
    db_path.write_bytes(content)
    before = snapshot(db_path.parent)

    with pytest.raises(StoreError) as raised:
        await SqliteStore.open(db_path)

    assert not isinstance(raised.value, SchemaTooNew)
    assert str(db_path) in raised.value.message
    assert snapshot(db_path.parent) == before


async def test_an_sqlite_file_of_another_program_is_refused_and_left_untouched(db_path: Path) -> None:
    with closing(sqlite3.connect(db_path)) as db, db:
        db.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO users (name) VALUES ('ada')")
    before = snapshot(db_path.parent)

    with pytest.raises(StoreError) as raised:
        await SqliteStore.open(db_path)

    assert "not a toka database" in raised.value.message
    assert snapshot(db_path.parent) == before


async def test_a_data_directory_that_does_not_exist_gives_store_error(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "dir"

    with pytest.raises(StoreError) as raised:
        await SqliteStore.open(missing / "toka.db")

    assert str(missing) in raised.value.message
    assert not (tmp_path / "no").exists()


async def test_a_database_path_that_is_a_directory_gives_store_error(tmp_path: Path) -> None:
    (tmp_path / "toka.db").mkdir()

    with pytest.raises(StoreError):
        await SqliteStore.open(tmp_path / "toka.db")


@needs_file_modes
async def test_a_new_database_in_a_read_only_directory_gives_store_error(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o500)
    try:
        with pytest.raises(StoreError):
            await SqliteStore.open(data / "toka.db")
        assert list(data.iterdir()) == []
    finally:
        data.chmod(0o700)


@needs_file_modes
async def test_a_read_only_database_gives_store_error_and_stays_unchanged(
    tmp_path: Path, open_sqlite: OpenSqlite
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    async with open_sqlite(data / "toka.db") as store:
        await store.append([NewEvent("s1", "message", {"text": "hi"})])
    before = snapshot(data)
    (data / "toka.db").chmod(0o400)
    data.chmod(0o500)
    try:
        with pytest.raises(StoreError):
            store = await SqliteStore.open(data / "toka.db")
            # Opening may succeed read-only on some platforms; writing must then fail cleanly.
            try:
                await store.append([NewEvent("s1", "message", {"text": "again"})])
            finally:
                await store.close()
    finally:
        data.chmod(0o700)
        (data / "toka.db").chmod(0o600)
    assert snapshot(data) == before


@pytest.mark.parametrize("durability, synchronous", [("normal", 1), ("full", 2)])
async def test_durability_sets_synchronous_on_the_writer(
    db_path: Path, open_sqlite: OpenSqlite, durability: str, synchronous: int
) -> None:
    async with open_sqlite(db_path, durability) as store:
        on_writer = await store._write(lambda db: db.execute("PRAGMA synchronous").fetchone()[0])
    assert on_writer == synchronous


async def test_the_database_is_in_wal_mode_with_a_busy_timeout(sqlite_store: SqliteStore, db_path: Path) -> None:
    def pragmas(db: sqlite3.Connection) -> tuple[str, int]:
        journal_mode = db.execute("PRAGMA journal_mode").fetchone()[0]
        return journal_mode, db.execute("PRAGMA busy_timeout").fetchone()[0]

    assert await sqlite_store._write(pragmas) == ("wal", BUSY_TIMEOUT_MS)
    assert await sqlite_store._read(pragmas) == ("wal", BUSY_TIMEOUT_MS)
    with closing(sqlite3.connect(db_path)) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # recorded in the file


async def test_an_acknowledged_append_is_visible_to_another_connection(
    sqlite_store: SqliteStore, db_path: Path
) -> None:
    [result] = await sqlite_store.append([NewEvent("s1", "message", {"text": "hi"})])

    # Not closed, not checkpointed: what append answered is already committed to the file.
    with closing(sqlite3.connect(db_path)) as db:
        rows = db.execute("SELECT seq, id FROM events").fetchall()
    assert rows == [(1, result.event.id)]


async def test_closing_checkpoints_everything_into_the_database_file(
    db_path: Path, tmp_path: Path, open_sqlite: OpenSqlite
) -> None:
    async with open_sqlite(db_path) as store:
        await store.append([NewEvent("s1", "message", {"n": n}) for n in range(100)])
    copy = tmp_path / "copy" / "toka.db"
    copy.parent.mkdir()
    shutil.copyfile(db_path, copy)  # the main file alone, without any -wal beside it

    async with open_sqlite(copy) as store:
        assert len(await store.query(EventQuery())) == 100
        assert (await store.verify()).ok
