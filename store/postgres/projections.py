"""The session tables of the PostgreSQL backend, read back as :class:`SessionInfo`, checked against
the log when a store opens, and every projection refilled from the log (store/projection.py says
what both SQL backends keep in them; the usage projection is store/postgres/usage.py's).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from psycopg import AsyncConnection

from store.base import SessionInfo, resolve_prefix
from store.events import Event
from store.postgres.reads import HOLD_APPENDS, fetch_rows
from store.postgres.usage import project_usage
from store.projection import AGREEMENT_SQL, SESSIONS_SQL, disagreement, fold, session_infos


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


async def project_batch(conn: AsyncConnection, events: list[Event]) -> None:
    """Fold the batch into the session tables: one statement per table, a row per session,
    agent and kind (each session, agent and kind appears once in a fold, as an upsert needs)."""
    folded = fold(events)
    # A new row's last active time is its activity's, or its first event's (store/projection.py);
    # an existing row's moves only with activity, in the UPDATE after.
    await conn.execute(
        "INSERT INTO sessions AS s SELECT u.session, u.events, u.first_seq, u.last_seq, u.first_ts,"
        " coalesce(u.active, u.first_ts), u.head FROM unnest(%b::text[], %b::bigint[], %b::bigint[], %b::bigint[],"
        " %b::bigint[], %b::bigint[], %b::text[]) AS u (session, events, first_seq, last_seq, first_ts, active, head)"
        " ON CONFLICT (session) DO UPDATE SET"
        " events = s.events + excluded.events, last_seq = excluded.last_seq,"
        " first_ts = least(s.first_ts, excluded.first_ts), head = excluded.head",
        columns([tuple(row) for row in folded.sessions]),
    )
    active = [(row[0], row[5]) for row in folded.sessions if row[5] is not None]
    if active:
        await conn.execute(
            "UPDATE sessions s SET last_ts = greatest(s.last_ts, u.active)"
            " FROM unnest(%b::text[], %b::bigint[]) AS u (session, active) WHERE s.session = u.session",
            columns(active),
        )
    for table, column, counts in (("session_agents", "agent", folded.agents), ("session_kinds", "kind", folded.kinds)):
        if counts:
            await conn.execute(
                f"INSERT INTO {table} AS t SELECT * FROM unnest(%b::text[], %b::text[], %b::bigint[])"
                f" ON CONFLICT (session, {column}) DO UPDATE SET events = t.events + excluded.events",
                columns(counts),
            )


def columns(rows: list[tuple[Any, ...]]) -> list[list[Any]]:
    """Rows (at least one) as one list per column, for ``unnest``."""
    return [list(column) for column in zip(*rows, strict=True)]
