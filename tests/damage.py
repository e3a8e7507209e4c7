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


WAL_HEADER = 32
WAL_FRAME_HEADER = 24


def wal_frames(wal: Path) -> int:
    """How many frames at the start of ``wal`` belong to its current generation (their salts are
    the header's). A checkpoint that caught up lets the writer start the WAL from the top again,
    over the older frames, so the file can be longer than what SQLite will read of it."""
    data = wal.read_bytes()
    page_size = int.from_bytes(data[8:12], "big")
    salts = data[16:24]
    frame = WAL_FRAME_HEADER + page_size
    count = 0
    while WAL_HEADER + (count + 1) * frame <= len(data):
        start = WAL_HEADER + count * frame
        if data[start + 8 : start + 16] != salts:
            break
        count += 1
    return count


def truncate_wal(path: Path, fraction: float) -> int:
    """Cut the WAL to ``fraction`` of its current generation's frames, so commits are lost
    whenever a checkpoint ran meanwhile; the bytes it had."""
    wal = Path(f"{path}-wal")
    size = wal.stat().st_size
    page_size = int.from_bytes(wal.read_bytes()[8:12], "big")
    frames = wal_frames(wal)
    assert frames > 1, f"the WAL of {path} holds {frames} frames of its generation: nothing to cut"
    os.truncate(wal, WAL_HEADER + int(frames * fraction) * (WAL_FRAME_HEADER + page_size))
    return size
