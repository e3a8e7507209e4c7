"""`toka admin recover`: a new database made of what can be read of a damaged one, which is kept.

The damaged file is read, never written: opened read-only (its WAL included), its rows copied
by store/sqlite/salvage.py into ``toka.db.recovering``, a database made by this toka's own
migrations. When SQLite's command-line shell is on the PATH and the file did not read whole,
its ``.recover`` (which reads every page, whatever the b-trees above it say) is tried too, and
what it found adds to what was read. The sessions, usage and search index are then rebuilt from
the events, and the recorded tip (store/tip.py) says how far the log had gone, so the seqs lost
are named even at its end.

Only then are the files swapped: the damaged database, its WAL, tip and damage record are
renamed to ``toka.db.damaged-<UTC time>`` (and its ``-wal``, ...), and the new one takes the
name ``toka.db``. Nothing must hold the database meanwhile: the client stops the daemon first
(daemon/client/recover.py).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from store.damage import damage_path, sqlite_check
from store.errors import NotFound, StoreError
from store.sqlite.projections import rebuild_projections
from store.sqlite.projector import mark_projected
from store.sqlite.salvage import Salvage, copy_events, copy_payloads, copy_tombstones, count_lost
from store.sqlite.schema import migrate
from store.sqlite.search import rebuild_search_index
from store.tip import Tip, TipRecord, Unreadable, log_tip, read_tip, tip_path

# The files that belong to a database, by the suffix of their name; the damaged set moves together.
SIDE_FILES = ("", "-wal", "-shm", "-tip", "-damaged")
# How long `.recover` may take, per GiB of the damaged file, before it is given up.
CLI_SECONDS_PER_GIB = 600


@dataclass
class Recovery:
    database: str
    kept_as: str
    methods: list[str]
    salvage: Salvage
    sessions: int = 0
    notes: list[str] = field(default_factory=list)
    check: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "database": self.database,
            "kept_as": self.kept_as,
            "methods": self.methods,
            **self.salvage.to_json(),
            "sessions": self.sessions,
            "integrity_check": list(self.check),
            "notes": self.notes,
        }


def recover(database: Path, sqlite3_shell: str | None = None) -> Recovery:
    """Make a new database at ``database`` from what can be read of the one there, kept beside it.
    ``sqlite3_shell``: the shell to try ``.recover`` with (default: ``sqlite3`` on the PATH)."""
    if not database.exists():
        raise NotFound(f"no database at {database}", "there is nothing to recover: the daemon makes a new one")
    building = database.with_name(database.name + ".recovering")
    for suffix in SIDE_FILES:
        Path(f"{building}{suffix}").unlink(missing_ok=True)  # a recovery that stopped half-way
    tip, notes = _recorded_tip(database)
    salvage = Salvage()
    methods = ["rows"]
    with closing(_new_database(building)) as target:
        with _read_only(database, notes) as source:
            whole = source is not None and _salvage(source, target, salvage, tip)
        if not whole or salvage.unreadable or salvage.payload_lost:
            with _shell_recovered(database, sqlite3_shell or shutil.which("sqlite3"), notes) as recovered:
                if recovered is not None:
                    methods.append("sqlite3 .recover")
                    _salvage(recovered, target, salvage, tip)
        count_lost(target, salvage, tip)
        target.isolation_level = None  # the rebuilds run their own transactions
        sessions = rebuild_projections(target)
        rebuild_search_index(target)
        mark_projected(target)  # the tables were refilled from the whole log
        target.execute("PRAGMA journal_mode = WAL")  # as the store keeps it; the WAL goes on close
        check = sqlite_check(target, deep=True)
        last = log_tip(target)
    os.chmod(building, 0o600)
    kept = _swap(database, building)
    if last is not None:
        record = TipRecord(database)
        record.write(last)
        record.close()
    return Recovery(str(database), str(kept), methods, salvage, sessions, notes, check)


def _recorded_tip(database: Path) -> tuple[int, list[str]]:
    try:
        tip: Tip | None = read_tip(tip_path(database))
    except Unreadable as exc:
        return 0, [f"{exc}: the log's end is known only from what could be read"]
    return (0, []) if tip is None else (tip.seq, [])


def _new_database(path: Path) -> sqlite3.Connection:
    target = sqlite3.connect(path)
    target.isolation_level = None
    migrate(target)  # a blank database: the schema of this toka, nothing to project yet
    target.isolation_level = "DEFERRED"  # each copy is one transaction, begun by its first insert
    return target


@contextmanager
def _read_only(database: Path, notes: list[str]) -> Iterator[sqlite3.Connection | None]:
    """The damaged file, read-only with its WAL; a copy of both, read there, when SQLite will not
    open it read-only where it lies (no shared-memory file, and none may be made). None, and a
    note, when not even its schema reads."""
    try:
        source = sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)
        source.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        if "malformed" in str(exc) or "not a database" in str(exc):
            notes.append(f"the schema of the damaged file cannot be read ({exc}): no row could be read by SQL")
            yield None
            return
        with tempfile.TemporaryDirectory(dir=database.parent) as scratch:
            copy = Path(scratch) / database.name
            for suffix in ("", "-wal"):
                if Path(f"{database}{suffix}").exists():
                    shutil.copyfile(f"{database}{suffix}", f"{copy}{suffix}")
            with closing(sqlite3.connect(copy)) as source:
                yield source
        return
    with closing(source):
        yield source


@contextmanager
def _shell_recovered(database: Path, shell: str | None, notes: list[str]) -> Iterator[sqlite3.Connection | None]:
    """What ``sqlite3 DATABASE .recover`` rebuilds of the file, as a database in a scratch
    directory; None (and a note saying why) where it is not there or does not work."""
    if shell is None:
        notes.append("no sqlite3 shell on the PATH: its .recover, which reads pages no query reaches, was not tried")
        yield None
        return
    timeout = CLI_SECONDS_PER_GIB * max(1.0, database.stat().st_size / 2**30)
    with tempfile.TemporaryDirectory(dir=database.parent) as scratch:
        rebuilt = Path(scratch) / "recovered.db"
        try:
            with subprocess.Popen(
                [shell, "-readonly", str(database), ".recover"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
            ) as dump:
                loaded = subprocess.run(
                    [shell, str(rebuilt)], stdin=dump.stdout, capture_output=True, timeout=timeout, check=False
                )
                failed = (dump.stderr.read() if dump.stderr else b"").decode(errors="replace").strip()
        except (OSError, subprocess.TimeoutExpired) as exc:
            notes.append(f"{shell} .recover could not run: {exc}")
            yield None
            return
        with closing(sqlite3.connect(rebuilt)) as recovered:
            tables = {row[0] for row in recovered.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not {"events", "blobs"} <= tables:
                why = failed or loaded.stderr.decode(errors="replace").strip() or "it rebuilt no events table"
                notes.append(f"{shell} .recover did not work here ({why.splitlines()[0]})")
                yield None
                return
            yield recovered


def _salvage(source: sqlite3.Connection, target: sqlite3.Connection, salvage: Salvage, tip_seq: int) -> bool:
    """Copy what reads of ``source``; whether it had the log's tables to read."""
    found = {table for table in ("blobs", "pruned", "events") if _has_table(source, table)}
    # Payloads first: an event is written only once its payload is there.
    if "blobs" in found:
        copy_payloads(source, target, salvage)
    if "pruned" in found:
        copy_tombstones(source, target, salvage)
    if "events" in found:
        copy_events(source, target, salvage, tip_seq)
    return {"blobs", "events"} <= found


def _has_table(db: sqlite3.Connection, table: str) -> bool:
    try:
        return (
            db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone() is not None
        )
    except sqlite3.DatabaseError:
        return True  # the schema did not read: try the table, row by row


def _swap(database: Path, built: Path) -> Path:
    """Move the damaged database's files aside and the new one into its place; where they went."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    kept = database.with_name(f"{database.name}.damaged-{stamp}")
    try:
        for suffix in SIDE_FILES:
            with contextlib.suppress(FileNotFoundError):
                os.rename(f"{database}{suffix}", f"{kept}{suffix}")
        os.rename(built, database)
    except OSError as exc:
        raise StoreError(
            f"the recovered database is {built}, but it could not take the place of {database}: {exc}",
            f"move it there yourself (mv {built} {database}) once nothing holds {database}",
        ) from None
    damage_path(database).unlink(missing_ok=True)
    return kept
