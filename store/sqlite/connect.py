"""Opening the SQLite backend's connections: what each one sets, what opening a database checks
(a file that is no toka database, or from a newer toka, is refused before anything is written;
the schema is brought up to date; the projections are compared with the log), and what SQLite's
errors mean for a person.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Literal

from store.errors import StoreError
from store.projection import AGREEMENT_SQL, disagreement
from store.sqlite import projector
from store.sqlite.projections import project_sessions, rebuild_projections
from store.sqlite.schema import applied, check_not_newer, migrate

Durability = Literal["normal", "full"]

BUSY_TIMEOUT_MS = 5000
# The writer's page cache (SQLite's default is 2 MiB): every append inserts into the id and
# key indexes at random places, and each page of them not in the cache is read again. Memory
# is taken only as the database grows.
WRITER_CACHE_KIB = 32 * 1024
# The size the WAL file is cut back to when it starts over: the most it holds before the writer
# has a checkpoint catch up (store/sqlite/store.py, CATCH_UP_WAL_BYTES). Cut back to less, most
# commits after a checkpoint grow the file again, which cost a fifth of a one-event append; kept,
# the file stays at its high-water mark (at most this) while the daemon runs, and the checkpoint
# of a clean stop truncates it (docs/storage.md, "Disk").
WAL_KEEP_BYTES = 16 * 1024 * 1024


def describe(path: Path, exc: sqlite3.Error) -> StoreError:
    text = str(exc)
    if "not a database" in text or "malformed" in text:
        return StoreError(
            f"{path} is not a readable toka database ({text})",
            "move the file aside or point TOKA_HOME elsewhere; `toka admin recover` keeps it and starts a new"
            " database with what it can read of it",
        )
    if "readonly" in text or "unable to open" in text or "disk I/O" in text:
        return StoreError(
            f"cannot write the database at {path} ({text})",
            "check that the data directory exists and is writable, or set TOKA_HOME",
        )
    if "full" in text:
        return StoreError(f"the disk holding {path} is full ({text})", "free some space and retry")
    return StoreError(f"database error on {path}: {text}")


def _check_database(db: sqlite3.Connection) -> list[str]:
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    done = applied(db)  # reads sqlite_master: fails here, before any write, on a non-database
    check_not_newer(done)
    return done


def prepare_writer(db: sqlite3.Connection, durability: Durability) -> None:
    _check_database(db)  # before any write: a file that is no toka database is refused untouched
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA wal_autocheckpoint = 0")  # see SqliteStore._checkpoint_in_background
    # When the WAL starts over its file is cut back to WAL_KEEP_BYTES, no further.
    db.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}")
    db.execute(f"PRAGMA synchronous = {'FULL' if durability == 'full' else 'NORMAL'}")
    db.execute(f"PRAGMA cache_size = -{WRITER_CACHE_KIB}")
    # An upgraded database holds events that a projection added by the upgrade has never seen:
    # the last step refills them all from the log, in that step's transaction.
    migrate(db, refill_after_upgrade)
    projector.catch_up(db)  # what was committed but not yet applied when the last process ended
    check_projections(db)


def refill_after_upgrade(db: sqlite3.Connection) -> None:
    """The derived tables made whole again after an upgrade, inside its last step's transaction:
    what they had not yet applied first (the search index refills from nowhere else), then the
    session tables and the usage projection refilled from the whole log."""
    projector.catch_up_in_transaction(db)
    project_sessions(db)


def check_projections(db: sqlite3.Connection) -> None:
    """Rebuild the projections when they disagree with the log at its end (store/projection.py
    says what is compared): a database left so by an older toka, or edited by hand."""
    found = disagreement(db.execute(AGREEMENT_SQL).fetchone())
    if found is not None:
        logging.getLogger("toka.store").warning("the session tables disagree with the log (%s): rebuilding them", found)
        rebuild_projections(db)


def prepare_reader(db: sqlite3.Connection, durability: Durability) -> None:
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    db.execute("PRAGMA query_only = ON")
