"""The chain of the SQLite backend's log verified: every event against its digest and its parent,
then each session's head (what a correct chain is: store/chain.py). A plain function of a
``sqlite3`` connection, run on the reader connection's thread in one hop (store/sqlite/store.py).
"""

from __future__ import annotations

import sqlite3

from store.base import CHUNK, ProgressCallback, VerifyReport
from store.chain import ChainVerifier
from store.rows import SELECT_INLINE, stored_row
from store.sqlite.retention import pruned_seq, replaced_ids


def verify_chain(db: sqlite3.Connection, session: str | None, progress: ProgressCallback | None) -> VerifyReport:
    """Every event of ``session`` (None: of the log) checked in seq order against its digest and
    its chain, then each session's head; ``progress`` hears every CHUNK events."""

    def seq_of(event_id: str) -> int | None:
        row = db.execute("SELECT seq FROM events WHERE id = ?", (event_id,)).fetchone()
        return row[0] if row else pruned_seq(db, event_id)

    verifier = ChainVerifier(seq_of, lambda seq: replaced_ids(db, seq))
    where, params = ("", []) if session is None else (" WHERE e.session = ?", [session])
    total = db.execute("SELECT count(*) FROM events e" + where, params).fetchone()[0]
    for done, row in enumerate(db.execute(SELECT_INLINE + where + " ORDER BY e.seq", params), 1):
        verifier.check(stored_row(row))
        if progress is not None and done % CHUNK == 0:
            progress(done, total)
    heads = db.execute("SELECT session, head FROM sessions" + where.replace("e.", ""), params)
    verifier.check_heads(heads.fetchall())
    if progress is not None:
        progress(total, total)
    return verifier.report(session)
