"""Damage done to a real database file, as a failing disk, a crash or a careless copy does it: a
page overwritten, the WAL cut short. Used by the store, daemon and CLI suites."""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

PAGE_SIZE = 4096


def checkpointed(path: Path) -> None:
    """Copy the WAL back into the file, so that every page lives in the file itself."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()


def root_page(path: Path, table: str) -> int:
    with closing(sqlite3.connect(path)) as db:
        return int(db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0])


def overwrite_page(path: Path, page: int, seed: int = 1) -> None:
    """Random bytes over page ``page`` (1-based, as SQLite counts) of the file."""
    with open(path, "r+b") as handle:
        handle.seek((page - 1) * PAGE_SIZE)
        handle.write(random.Random(seed).randbytes(PAGE_SIZE))


def corrupt_table(path: Path, table: str, seed: int = 1) -> int:
    """Overwrite the root page of ``table`` (for a small table its only page); the page number.
    The schema on page 1 stays readable, so the file still opens."""
    checkpointed(path)
    page = root_page(path, table)
    assert page > 1, f"{table} lives on the schema's page"
    overwrite_page(path, page, seed)
    return page


APPEND_AND_DIE = """
import asyncio, os, sys
from store.events import NewEvent
from store.sqlite.store import SqliteStore

async def main(path, batches, durability):
    store = await SqliteStore.open(path, durability)
    for n in range(batches):
        await store.append([NewEvent(f"s{n % 3}", "message", {"n": n, "pad": "x" * 300})])
    os._exit(0)  # as SIGKILL leaves it: the WAL holds every commit, nothing checkpointed

asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
"""


def append_and_die(path: Path, batches: int, durability: str = "normal") -> None:
    """Append ``batches`` one-event batches in another process that then dies without closing the
    store: every commit is in the WAL."""
    subprocess.run(
        [sys.executable, "-c", APPEND_AND_DIE, str(path), str(batches), durability],
        check=True,
        timeout=120,
        env={**os.environ},
    )


def truncate_wal(path: Path, fraction: float) -> int:
    """Cut the WAL to ``fraction`` of its size; the bytes it had."""
    wal = Path(f"{path}-wal")
    size = wal.stat().st_size
    os.truncate(wal, int(size * fraction))
    return size
