"""A damaged database file, as the SQLite backend learns of it and remembers it.

Damage is seen three ways: SQLite answers a statement with SQLITE_CORRUPT, its own check
(``PRAGMA quick_check``, ``integrity_check``) fails, or the log no longer holds an event it
committed (store/tip.py). From then on the store refuses every
write, since appending into a malformed file spreads the damage and appending past a lost tail
would hand its seqs to new events and erase the evidence; reads go on, for what can be read.

The damage is written beside the database (``toka.db-damaged``, JSON: why and since when), so a
restarted daemon refuses writes too; `toka admin recover` (store/sqlite/recover.py) moves it
aside with the damaged file. Someone who repaired the file by other means deletes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.errors import DatabaseDamaged
from store.events import format_ts, now_us

# SQLite's primary result code for a damaged file (the low byte of an extended code such as
# SQLITE_CORRUPT_INDEX). A file that is no database at all (SQLITE_NOTADB) is refused at open.
SQLITE_CORRUPT = 11

# Lines of SQLite's check kept: the first few name the damage, a thousand more add nothing.
MAX_CHECK_LINES = 100


def sqlite_check(db: sqlite3.Connection, deep: bool) -> tuple[str, ...]:
    """SQLite's own check of the file: ``quick_check`` (every page read, O(N)) or, ``deep``, also
    every index against its table (``integrity_check``, O(N log N)); ``("ok",)`` when sound."""
    name = "integrity_check" if deep else "quick_check"
    try:
        rows = db.execute(f"PRAGMA {name}({MAX_CHECK_LINES})").fetchall()
    except sqlite3.DatabaseError as exc:  # a page so damaged that the check cannot go on
        return (f"{name} stopped: {exc}",)
    lines = tuple(line for row in rows for line in str(row[0]).splitlines() if line.strip())
    return lines[:MAX_CHECK_LINES] or ("ok",)


RECOVER_HINT = "`toka admin recover` saves what can be read into a new database and keeps this file as it is"


@dataclass(frozen=True, slots=True)
class Damage:
    reason: str
    since_us: int

    def to_json(self) -> dict[str, Any]:
        return {"reason": self.reason, "since": format_ts(self.since_us)}

    def refusal(self, database: Path | str) -> DatabaseDamaged:
        """The error a write gets while the database is damaged."""
        return DatabaseDamaged(
            f"the database {database} is damaged ({self.reason}): it takes no more writes", RECOVER_HINT
        )


def damage_path(database: Path) -> Path:
    return Path(f"{database}-damaged")


def is_corruption(exc: sqlite3.Error) -> bool:
    """Whether SQLite said the file itself is damaged (not locked, full, read-only, ...)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF == SQLITE_CORRUPT
    return "malformed" in str(exc)


def read_damage(database: Path) -> Damage | None:
    """The damage recorded beside ``database``, or None. A record that cannot be parsed still
    says the file was found damaged."""
    try:
        text = damage_path(database).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Damage(f"its damage record cannot be read ({exc.strerror})", now_us())
    try:
        found = json.loads(text)
        return Damage(str(found["reason"]), int(found["since_us"]))
    except (ValueError, KeyError, TypeError):
        return Damage("its damage record is unreadable", now_us())


def record_damage(database: Path, damage: Damage) -> None:
    """Write ``damage`` beside ``database`` (the first one seen is kept)."""
    path = damage_path(database)
    if path.exists():
        return
    partial = path.with_name(path.name + ".tmp")
    # A disk that refuses the record still leaves this process refusing writes.
    with contextlib.suppress(OSError):
        partial.write_text(json.dumps({"reason": damage.reason, "since_us": damage.since_us}), encoding="utf-8")
        os.replace(partial, path)
