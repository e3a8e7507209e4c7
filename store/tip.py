"""The log's tip, recorded outside the database: the seq and id of the last event committed.

SQLite in WAL mode keeps recent commits in the ``-wal`` file. A WAL cut short (a copy that missed
its end, a disk that lost it, a crash with ``durability = "normal"``, where commits are not yet
on disk) silently takes the last commits with it: the database opens, SQLite's own check passes
and the chain of what is left verifies. So after each commit the store writes the new tip into
``toka.db-tip``, a file the WAL's fate cannot roll back, and checks the log against it when it
opens and when it is verified: the event at the tip's seq must be the tip's event (or, pruned
since, its tombstone must name it). A log that ends before its tip lost events it had answered
for, and the store is damaged (store/damage.py).

The record is one fixed-size line rewritten in place, so a write is one ``pwrite`` (a few
microseconds, no fsync): written after the commit, it is never ahead of what was committed
unless the database lost commits afterwards, which is what it is there to show. The signed tree
heads (daemon/heads/) record more (the root over every event, signed, copied to a witness); a
check against them runs beside this one, each in its own function.
"""

from __future__ import annotations

import os
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_LINE = re.compile(rb"^(\d{20}) ([0-9a-f]{64})\n$")


@dataclass(frozen=True, slots=True)
class Tip:
    seq: int
    id: str

    def line(self) -> bytes:
        return f"{self.seq:020d} {self.id}\n".encode()

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "id": self.id}


class Unreadable(ValueError):
    """The tip record exists but does not hold a tip."""


def tip_path(database: Path) -> Path:
    return Path(f"{database}-tip")


class TipRecord:
    """The tip file of one database, opened once and rewritten in place after each commit."""

    def __init__(self, database: Path) -> None:
        self.path = tip_path(database)
        self._fd: int | None = None

    def read(self) -> Tip | None:
        """The recorded tip; None when there is no record (a database from before it, or a new
        one); Unreadable when the file holds something else."""
        return read_tip(self.path)

    def write(self, tip: Tip) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        os.pwrite(self._fd, tip.line(), 0)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def read_tip(path: Path) -> Tip | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    found = _LINE.match(data)
    if found is None:
        raise Unreadable(f"{path} does not hold a seq and an event id")
    return Tip(int(found.group(1)), found.group(2).decode())


def log_tip(db: sqlite3.Connection) -> Tip | None:
    """The log's last event as a tip; None for an empty log."""
    row = db.execute("SELECT seq, id FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    return None if row is None else Tip(row[0], row[1])


def tip_problem(db: sqlite3.Connection, tip: Tip, record: str) -> tuple[str, str] | None:
    """How the log fails to hold ``tip`` (recorded in the file named ``record``), as (what,
    detail) in verify's terms, or None when it does."""
    row = db.execute("SELECT id FROM events WHERE seq = ?", (tip.seq,)).fetchone()
    if row is not None and row[0] == tip.id:
        return None
    # A prune since may have put a checkpoint at that seq; its tombstone names what was there.
    if db.execute("SELECT 1 FROM pruned WHERE id = ? AND seq = ?", (tip.id, tip.seq)).fetchone():
        return None
    last = log_tip(db)
    if last is None or last.seq < tip.seq:
        first_lost, ends = (
            (1, "the log is empty") if last is None else (last.seq + 1, f"the log ends at seq {last.seq}")
        )
        return (
            "truncated",
            f"seq {tip.seq} was committed ({record} says so), but {ends}: seqs {first_lost} to {tip.seq} are"
            " lost (a WAL cut short, a crash with durability normal, or an older copy of the database)",
        )
    if row is None:
        return "missing", f"seq {tip.seq} was committed ({record} says so), but the log has no event there"
    return "replaced", f"seq {tip.seq} holds event {row[0][:12]}, but {tip.id[:12]} was committed there"
