"""The reads of the SQLite backend that are not search or sessions: rows by statement, an event by
id prefix, a payload by digest prefix, the chain's verification and the database's figures.

Each is a plain function of a ``sqlite3`` connection, run on the reader connection's thread in
one hop (see store/sqlite/store.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from store.base import CHUNK, ProgressCallback, Stats, VerifyReport
from store.chain import ChainVerifier
from store.events import Event
from store.rows import SELECT, event_text, hex_range, one_event, one_payload, stored_row
from store.sqlite.health import disk_bytes
from store.sqlite.retention import pruned_seq, replaced_ids


def fetch_rows(db: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[Any]:
    return db.execute(sql, params).fetchall()


def fetch_json(db: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[tuple[int, str]]:
    """(seq, the event as JSON text) for each row, its payload spliced in without being parsed."""
    return [(row[0], event_text(row)) for row in db.execute(sql, params)]


def get_event(db: sqlite3.Connection, event_id: str) -> Event:
    """The event whose id is ``event_id``, or the one whose id it is a unique prefix of."""
    prefix = event_id.lower()
    rows = db.execute(SELECT + " WHERE e.id = ?", (prefix,)).fetchall()
    if not rows and (span := hex_range(prefix)):
        rows = db.execute(SELECT + " WHERE e.id >= ? AND e.id < ? LIMIT 6", span).fetchall()
    return one_event(event_id, rows)


def get_payload(db: sqlite3.Connection, digest: str) -> tuple[str, dict[str, Any]]:
    """(digest, payload) of the stored payload whose digest ``digest`` is a unique prefix of."""
    span = hex_range(digest.lower())
    sql = "SELECT digest, codec, data FROM blobs WHERE digest >= ? AND digest < ? LIMIT 6"
    return one_payload(digest, db.execute(sql, span).fetchall() if span else [])


def verify_chain(db: sqlite3.Connection, session: str | None, progress: ProgressCallback | None) -> VerifyReport:
    """Every event of ``session`` (None: of the log) checked in seq order against its digest and
    its chain, then each session's head; ``progress`` hears every CHUNK events."""

    def seq_of(event_id: str) -> int | None:
        row = db.execute("SELECT seq FROM events WHERE id = ?", (event_id,)).fetchone()
        return row[0] if row else pruned_seq(db, event_id)

    verifier = ChainVerifier(seq_of, lambda seq: replaced_ids(db, seq))
    where, params = ("", []) if session is None else (" WHERE e.session = ?", [session])
    total = db.execute("SELECT count(*) FROM events e" + where, params).fetchone()[0]
    for done, row in enumerate(db.execute(SELECT + where + " ORDER BY e.seq", params), 1):
        verifier.check(stored_row(row))
        if progress is not None and done % CHUNK == 0:
            progress(done, total)
    heads = db.execute("SELECT session, head FROM sessions" + where.replace("e.", ""), params)
    verifier.check_heads(heads.fetchall())
    if progress is not None:
        progress(total, total)
    return verifier.report(session)


def read_totals(db: sqlite3.Connection) -> tuple[int, int]:
    """Events and sessions, from the session table (a projection the store keeps with the log)."""
    events, sessions = db.execute("SELECT coalesce(sum(events), 0), count(*) FROM sessions").fetchone()
    return events, sessions


def read_stats(db: sqlite3.Connection, path: Path) -> Stats:
    """How many events, sessions and payloads the log holds, their sizes, and what its files take on disk."""
    events, sessions = db.execute("SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM sessions)").fetchone()
    payload_bytes = db.execute(
        "SELECT coalesce(sum(b.size), 0) FROM events e JOIN blobs b ON b.digest = e.digest"
    ).fetchone()[0]
    blobs, blob_bytes, stored_bytes = db.execute(
        "SELECT count(*), coalesce(sum(size), 0), coalesce(sum(length(data)), 0) FROM blobs"
    ).fetchone()
    return Stats(events, sessions, blobs, payload_bytes, blob_bytes, stored_bytes, disk_bytes(path))
