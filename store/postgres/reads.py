"""The reads of the PostgreSQL backend: rows by statement, an event or payload by prefix, the
session tables, the figures, and rebuilding what is derived from the log.

Each is a coroutine of one connection; the statements are SQLite's where the two dialects
agree (store/query.py's WHERE clause among them, its ``?`` written as psycopg's ``%s``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from psycopg import AsyncConnection

from store.base import CHUNK, SessionInfo, Stats, resolve_prefix
from store.errors import StoreError
from store.events import Event
from store.postgres.search import index_rows
from store.postgres.usage import project_usage
from store.projection import AGREEMENT_SQL, SESSIONS_SQL, disagreement, session_infos
from store.query import dialect
from store.rows import SELECT, event_of, hex_range, one_event, one_payload

# Taken by a rebuild before it reads the log: appends (which lock the table in EXCLUSIVE mode,
# store/postgres/append.py) and other rebuilds, from any daemon, wait until it commits; reads go
# on. Else an event committed meanwhile is counted or indexed twice (a duplicate key fails the
# rebuild) or not at all.
HOLD_APPENDS = "LOCK TABLE events IN SHARE ROW EXCLUSIVE MODE"


async def fetch_rows(conn: AsyncConnection, sql: str, params: Sequence[Any]) -> list[Any]:
    cursor = await conn.execute(dialect(sql), params)
    return await cursor.fetchall()


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


async def read_sessions(conn: AsyncConnection, name: str | None) -> list[SessionInfo]:
    """Every session, the one last active first (store/kinds.py says what counts); or the one ``name``
    names or is a unique prefix of."""
    if name is None:
        rows = await fetch_rows(conn, "SELECT * FROM sessions ORDER BY last_ts DESC, last_seq DESC", ())
    else:
        rows = await fetch_rows(conn, "SELECT * FROM sessions WHERE session = ?", (name,))
        if not rows:
            sql = "SELECT * FROM sessions WHERE session >= ? AND left(session, ?) = ? ORDER BY session LIMIT 6"
            found = {row[0]: row for row in await fetch_rows(conn, sql, (name, len(name), name))}
            rows = [found[resolve_prefix(name, list(found), "session")]]
    agents: dict[str, dict[str, int]] = defaultdict(dict)
    kinds: dict[str, dict[str, int]] = defaultdict(dict)
    for table, into in (("session_agents", agents), ("session_kinds", kinds)):
        where, params = ("", ()) if name is None else (" WHERE session = ?", (rows[0][0],))
        for session, item, count in await fetch_rows(
            conn, f"SELECT * FROM {table}{where} ORDER BY events DESC", params
        ):
            into[session][item] = count
    return session_infos(rows, agents, kinds)


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


async def projections_disagree(conn: AsyncConnection) -> str | None:
    """What of the session tables disagrees with the log at its end (store/projection.py)."""
    return disagreement((await fetch_rows(conn, AGREEMENT_SQL, ()))[0])


async def rebuild_projections(conn: AsyncConnection) -> int:
    """Refill the session tables and the usage projection from the log, in one transaction; the
    number of sessions."""
    async with conn.transaction():
        await conn.execute(HOLD_APPENDS)
        for table in ("sessions", "session_agents", "session_kinds"):
            await conn.execute(f"DELETE FROM {table}")
        await conn.execute("INSERT INTO sessions " + SESSIONS_SQL.format(where=""))
        await conn.execute(
            "INSERT INTO session_agents SELECT session, agent, count(*) FROM events"
            " WHERE agent IS NOT NULL GROUP BY session, agent"
        )
        await conn.execute(
            "INSERT INTO session_kinds SELECT session, kind, count(*) FROM events GROUP BY session, kind"
        )
        await project_usage(conn)
        return int((await fetch_rows(conn, "SELECT count(*) FROM sessions", ()))[0][0])


async def rebuild_search_index(conn: AsyncConnection) -> int:
    """Index the text of every event afresh, in one transaction; the number of events with text."""
    async with conn.transaction():
        await conn.execute(HOLD_APPENDS)
        await conn.execute("DELETE FROM search_text")
        after = count = 0
        while rows := await fetch_rows(conn, SELECT + " WHERE e.seq > ? ORDER BY e.seq LIMIT ?", (after, CHUNK)):
            events = []
            for row in rows:
                try:
                    events.append(event_of(row))
                except StoreError:
                    continue  # a damaged payload is for `toka verify` to report, not for search
            texts = index_rows(events)
            if texts:
                async with conn.cursor() as cursor:
                    await cursor.executemany("INSERT INTO search_text VALUES (%s, %s, %s::tsvector)", texts)
            count += len(texts)
            after = rows[-1][0]
    return count
