"""What `toka doctor` needs to know about a database file, read without changing it.

The file is opened read-only in a connection of its own, so this works the same whether or
not a daemon has the database open (the daemon answers ``doctor.database`` with it; the client
reads the file itself when no daemon runs). SQLite's ``quick_check`` reads every page, which is
what a diagnosis of the file should do. Only facts come back; what they mean, and the command
that fixes each, is the doctor's to say.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from store.damage import read_damage, sqlite_check
from store.events import format_ts
from store.sqlite.schema import MIGRATIONS
from store.tip import Unreadable, read_tip, tip_path, tip_problem


@dataclass(frozen=True)
class DatabaseHealth:
    path: str
    exists: bool
    unreadable: str | None = None
    """Why the file cannot be opened or read (then nothing below was looked at)."""
    quick_check: tuple[str, ...] = ()
    """SQLite's ``PRAGMA quick_check`` lines: ``("ok",)`` for a sound file."""
    size_bytes: int = 0
    schema_version: int | None = None
    """The file's ``user_version``: the migrations applied to it."""
    schema_current: int = len(MIGRATIONS)
    """The schema version this toka writes."""
    events_table: bool = False
    newest_ts: int | None = None
    """The time of the newest event, in UTC microseconds; None without events."""
    damaged: dict[str, Any] | None = None
    """Why the store found the file damaged (store/damage.py): it takes no writes."""
    tip: dict[str, Any] | None = None
    """The last event committed, as recorded beside the file (store/tip.py)."""
    tip_problem: str | None = None
    """How the log fails to hold its recorded tip: committed events lost."""

    def to_json(self) -> dict[str, Any]:
        document = asdict(self)
        document["quick_check"] = list(self.quick_check)
        document["newest"] = None if self.newest_ts is None else format_ts(self.newest_ts)
        return {"backend": "sqlite", **document}

    @property
    def sound(self) -> bool:
        return self.quick_check == ("ok",) and self.damaged is None and self.tip_problem is None


def inspect_database(path: Path) -> DatabaseHealth:
    """The facts about the database at ``path``; never creates, migrates or writes it."""
    if not path.exists():
        return DatabaseHealth(str(path), exists=False)
    try:
        db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error as exc:
        return DatabaseHealth(str(path), exists=True, unreadable=f"cannot open {path}: {exc}")
    damage = read_damage(path)
    try:
        quick_check = sqlite_check(db, deep=False)
        schema_version = db.execute("PRAGMA user_version").fetchone()[0]
        events_table, newest_ts = _newest_event(db)
        tip, lost = _tip(db, path) if events_table else (None, None)
    except sqlite3.Error as exc:
        return DatabaseHealth(str(path), exists=True, unreadable=f"cannot read {path}: {exc}")
    finally:
        db.close()
    return DatabaseHealth(
        str(path),
        exists=True,
        quick_check=quick_check,
        size_bytes=disk_bytes(path),  # the WAL and its index too, as `toka stats` counts them
        schema_version=schema_version,
        events_table=events_table,
        newest_ts=newest_ts,
        damaged=None if damage is None else damage.to_json(),
        tip=tip,
        tip_problem=lost,
    )


def disk_bytes(path: Path) -> int:
    """The database file and its WAL and shared-memory files, in bytes."""
    return sum(os.path.getsize(f) for f in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if os.path.exists(f))


def _tip(db: sqlite3.Connection, path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The recorded tip and, when the log does not hold it, how."""
    try:
        tip = read_tip(tip_path(path))
        found = None if tip is None else tip_problem(db, tip, tip_path(path).name)
    except (Unreadable, sqlite3.OperationalError):  # rewritten at the next commit; `toka verify` says so
        return None, None
    return None if tip is None else tip.to_json(), None if found is None else found[1]


def _newest_event(db: sqlite3.Connection) -> tuple[bool, int | None]:
    try:
        newest = db.execute("SELECT max(ts) FROM events").fetchone()[0]
    except sqlite3.OperationalError:
        return False, None  # a database the daemon has not set up yet
    return True, newest
