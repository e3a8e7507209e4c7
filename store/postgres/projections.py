"""The session tables of the PostgreSQL backend, read back as :class:`SessionInfo`, checked against
the log when a store opens, and every projection refilled from the log (store/projection.py says
what both SQL backends keep in them; the usage projection is store/postgres/usage.py's).
"""

from __future__ import annotations

from collections import defaultdict

from psycopg import AsyncConnection

from store.base import SessionInfo, resolve_prefix
from store.postgres.reads import HOLD_APPENDS, fetch_rows
from store.postgres.usage import project_usage
from store.projection import AGREEMENT_SQL, SESSIONS_SQL, disagreement, session_infos


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
