"""The SQLite backend's WAL: how much it holds, read from its shared-memory index, and its
checkpoints (store/sqlite/store.py says when each runs).

The WAL file's size says how far the file grew, not what it holds: the writer keeps the file
when the WAL starts over (store/sqlite/connect.py, ``WAL_KEEP_BYTES``), so its size stays at its
high-water mark. What the WAL holds is the index's ``mxFrame``, the number of valid frames, in the
header SQLite keeps at the start of the ``-shm`` file (sqlite.org/walformat.html, "The WAL-Index
Header": ``szPage`` at byte 14, ``mxFrame`` at byte 16, in the machine's byte order).
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

# A WAL frame is a page with a 24-byte header; the file starts with a 32-byte header.
FRAME_HEADER_BYTES = 24
FILE_HEADER_BYTES = 32


def wal_held_bytes(shm: Path) -> int:
    """The bytes of frames the WAL holds now (0 when its index cannot be read)."""
    try:
        fd = os.open(shm, os.O_RDONLY)
    except OSError:
        return 0
    try:
        header = os.pread(fd, 20, 0)
    except OSError:
        return 0
    finally:
        os.close(fd)
    if len(header) < 20:
        return 0
    page = int.from_bytes(header[14:16], sys.byteorder)
    page = 65536 if page == 1 else page  # 65536 does not fit in 16 bits: SQLite writes 1
    frames = int.from_bytes(header[16:20], sys.byteorder)
    return FILE_HEADER_BYTES + frames * (page + FRAME_HEADER_BYTES) if frames else 0


def wal_checkpoint(db: sqlite3.Connection, mode: str) -> None:
    db.execute(f"PRAGMA wal_checkpoint({mode})").fetchall()
