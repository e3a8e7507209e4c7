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
from store.rows import INLINE_JOIN, SELECT_INLINE, event_text, hex_range, one_event, one_payload
from store.sqlite.health import disk_bytes


def fetch_rows(db: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[Any]:
    return db.execute(sql, params).fetchall()


def fetch_json(db: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[tuple[int, str]]:
    """(seq, the event as JSON text) for each row, its payload spliced in without being parsed."""
    return [(row[0], event_text(row)) for row in db.execute(sql, params)]


def get_event(db: sqlite3.Connection, event_id: str) -> Event:
    """The event whose id is ``event_id``, or the one whose id it is a unique prefix of."""
    prefix = event_id.lower()
    rows = db.execute(SELECT_INLINE + " WHERE e.id = ?", (prefix,)).fetchall()
    if not rows and (span := hex_range(prefix)):
        rows = db.execute(SELECT_INLINE + " WHERE e.id >= ? AND e.id < ? LIMIT 6", span).fetchall()
    return one_event(event_id, rows)


def get_payload(db: sqlite3.Connection, digest: str) -> tuple[str, dict[str, Any]]:
    """(digest, payload) of the stored payload whose digest ``digest`` is a unique prefix of:
    in ``blobs``, or kept in an event's row."""
    span = hex_range(digest.lower())
    if not span:
        return one_payload(digest, [])
    sql = "SELECT digest, codec, data FROM blobs WHERE digest >= ? AND digest < ? LIMIT 6"
    rows = db.execute(sql, span).fetchall()
    if len(rows) == 1 and rows[0][0] == digest.lower():
        return one_payload(digest, rows)
    # The small payloads are in their events' rows. Events have no index on digest (nothing
    # else looks them up by it, and an index would cost every append a page), so this is a
    # scan of the log: fine for a payload looked up by hand (`toka blob DIGEST`).
    inline = (
        "SELECT digest, 0, max(payload) FROM events WHERE payload IS NOT NULL AND digest >= ? AND digest < ?"
        " GROUP BY digest LIMIT 6"
    )
    return one_payload(digest, rows + db.execute(inline, span).fetchall())


def read_totals(db: sqlite3.Connection) -> tuple[int, int]:
    """Events and sessions, from the session table (a projection the store keeps with the log)."""
    events, sessions = db.execute("SELECT coalesce(sum(events), 0), count(*) FROM sessions").fetchone()
    return events, sessions


def read_stats(db: sqlite3.Connection, path: Path) -> Stats:
    """How many events, sessions and payloads the log holds, their sizes, and what its files take
    on disk. The payloads stored are the rows of ``blobs`` (each distinct) and those kept in
    their events' rows (small ones, stored with each event that has them)."""
    events, sessions = db.execute("SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM sessions)").fetchone()
    payload_bytes, inline, inline_bytes = db.execute(
        "SELECT coalesce(sum(coalesce(length(e.payload), b.size)), 0), count(e.payload),"
        " coalesce(sum(length(e.payload)), 0)"
        " FROM events e " + INLINE_JOIN
    ).fetchone()
    blobs, blob_bytes, stored_bytes = db.execute(
        "SELECT count(*), coalesce(sum(size), 0), coalesce(sum(length(data)), 0) FROM blobs"
    ).fetchone()
    return Stats(
        events,
        sessions,
        blobs + inline,
        payload_bytes,
        blob_bytes + inline_bytes,
        stored_bytes + inline_bytes,
        disk_bytes(path),
    )
