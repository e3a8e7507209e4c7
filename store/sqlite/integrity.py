"""What one SQLite store knows of its file's soundness: the damage it has seen (store/damage.py),
the tip it records after each commit (store/tip.py), and the database's own check.

The store calls :meth:`Integrity.opened` on its writer when it opens (the log against its
recorded tip), :meth:`Integrity.committed` after each commit, :meth:`Integrity.refuse_writes`
before each write and :meth:`Integrity.mark` when SQLite reports corruption; ``toka verify``
and doctor reach :meth:`Integrity.check` through ``check_database``.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from store.base import DatabaseCheck, Problem
from store.damage import Damage, read_damage, record_damage, sqlite_check
from store.events import now_us
from store.tip import Tip, TipRecord, Unreadable, log_tip, tip_problem

log = logging.getLogger("toka.store")


class Integrity:
    def __init__(self, database: Path) -> None:
        self.database = database
        self.tip = TipRecord(database)
        self.damage: Damage | None = read_damage(database)
        self._tip_unwritable = False

    def refuse_writes(self) -> None:
        if self.damage is not None:
            raise self.damage.refusal(self.database)

    def mark(self, reason: str) -> None:
        """The database is damaged: say why, remember it beside the file, refuse writes from now on."""
        if self.damage is None:
            self.damage = Damage(reason, now_us())
            log.error("the database %s is damaged (%s): it takes no more writes", self.database, reason)
            record_damage(self.database, self.damage)

    def committed(self, tip: Tip) -> None:
        try:
            self.tip.write(tip)
        except OSError as exc:  # the commit stands; only the evidence of it is missing
            if not self._tip_unwritable:
                log.warning("cannot record the log's tip in %s: %s", self.tip.path, exc.strerror)
            self._tip_unwritable = True

    def opened(self, db: sqlite3.Connection) -> None:
        """Check the log against its recorded tip (on the writer, when the store opens); a log
        without a record yet (a database of an older toka) starts one."""
        try:
            recorded = self.tip.read()
        except Unreadable as exc:
            log.warning("%s; it is written again at the next commit", exc)
            return
        if recorded is None:
            if (current := log_tip(db)) is not None:
                self.committed(current)
            return
        if (found := tip_problem(db, recorded, self.tip.path.name)) is not None:
            self.mark(found[1])

    def check(self, db: sqlite3.Connection, deep: bool) -> DatabaseCheck:
        """SQLite's check and the recorded tip, as problems in verify's terms; a failure of
        either marks the database damaged."""
        found = sqlite_check(db, deep)
        name = "integrity_check" if deep else "quick_check"
        problems = []
        if found != ("ok",):
            detail = f"SQLite's {name} failed: {'; '.join(found[:3])}"
            problems.append(Problem(0, "", "", "database", detail))
            self.mark(detail)
        recorded = None
        try:
            recorded = self.tip.read()
        except Unreadable as exc:
            problems.append(Problem(0, "", "", "database", f"{exc}: whether the log lost its last events is unknown"))
        if recorded is not None and (lost := tip_problem(db, recorded, self.tip.path.name)) is not None:
            what, detail = lost
            problems.append(Problem(recorded.seq, recorded.id, "", what, detail))  # type: ignore[arg-type]
            self.mark(detail)
        if self.damage is not None and not problems:
            problems.append(Problem(0, "", "", "database", f"found damaged before: {self.damage.reason}"))
        return DatabaseCheck(name, found, recorded, self.damage, tuple(problems))

    def close(self) -> None:
        self.tip.close()
