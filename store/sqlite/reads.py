"""The reads of the SQLite backend that are not search, sessions or verify: rows by statement, an
event by id prefix, a payload by digest prefix and the database's figures.

Each is a plain function of a ``sqlite3`` connection, run on the reader connection's thread in
one hop (see store/sqlite/store.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from store.base import Stats
from store.events import Event
from store.rows import SELECT, event_text, hex_range, one_event, one_payload
from store.sqlite.health import disk_bytes


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
