"""The reads of the PostgreSQL backend that are not search, sessions or verify: rows by statement,
an event or payload by prefix, and the database's figures.

Each is a coroutine of one connection; the statements are SQLite's where the two dialects
agree (store/query.py's WHERE clause among them, its ``?`` written as psycopg's ``%s``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg import AsyncConnection

from store.base import Stats
from store.events import Event
from store.query import dialect
from store.rows import SELECT, event_text, hex_range, one_event, one_payload

# Taken by a rebuild before it reads the log: appends (which lock the table in EXCLUSIVE mode,
# store/postgres/append.py) and other rebuilds, from any daemon, wait until it commits; reads go
# on. Else an event committed meanwhile is counted or indexed twice (a duplicate key fails the
# rebuild) or not at all.
HOLD_APPENDS = "LOCK TABLE events IN SHARE ROW EXCLUSIVE MODE"


async def fetch_rows(conn: AsyncConnection, sql: str, params: Sequence[Any]) -> list[Any]:
    cursor = await conn.execute(dialect(sql), params)
    return await cursor.fetchall()


async def fetch_json(conn: AsyncConnection, sql: str, params: Sequence[Any]) -> list[tuple[int, str]]:
    """(seq, the event as JSON text) for each row, its payload spliced in without being parsed."""
    return [(row[0], event_text(row)) for row in await fetch_rows(conn, sql, params)]


async def get_event(conn: AsyncConnection, event_id: str) -> Event:
    """The event whose id is ``event_id``, or the one whose id it is a unique prefix of."""
    prefix = event_id.lower()
    rows = await fetch_rows(conn, SELECT + " WHERE e.id = ?", (prefix,))
    if not rows and (span := hex_range(prefix)):  # ids are in the "C" collation: a range scan
        rows = await fetch_rows(conn, SELECT + " WHERE e.id >= ? AND e.id < ? LIMIT 6", span)
    return one_event(event_id, rows)


async def get_payload(conn: AsyncConnection, digest: str) -> tuple[str, dict[str, Any]]:
    span = hex_range(digest.lower())
    sql = "SELECT digest, codec, data FROM blobs WHERE digest >= ? AND digest < ? LIMIT 6"
    return one_payload(digest, await fetch_rows(conn, sql, span) if span else [])


async def read_stats(conn: AsyncConnection) -> Stats:
    (events, sessions, payload_bytes, blobs, blob_bytes, stored_bytes, disk), *_ = await fetch_rows(
        conn,
        "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM sessions),"
        " (SELECT coalesce(sum(b.size), 0) FROM events e JOIN blobs b ON b.digest = e.digest),"
        " count(*), coalesce(sum(size), 0), coalesce(sum(octet_length(data)), 0),"
        " pg_database_size(current_database()) FROM blobs",
        (),
    )
    return Stats(events, sessions, blobs, int(payload_bytes), int(blob_bytes), int(stored_bytes), disk)
