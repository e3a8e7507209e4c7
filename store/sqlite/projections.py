"""The session tables of the SQLite backend, and the refill of every projection: projections of
the log, kept up to date by each append.

``sessions`` holds a row per session (its event count, first and last seq and time, head
event); ``session_agents`` and ``session_kinds`` count its events per agent and per kind;
``usage_buckets`` sums its usage per quarter of an hour, agent, model and prompt class
(store/usage.py; kept by store/sqlite/usage.py). They are derived data: each append folds its
batch in (:func:`project_batch`), a prune recounts its session, and :func:`rebuild_projections`
refills them all from the log, as an upgrade that adds a table must.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict

from store.base import SessionInfo, resolve_prefix
from store.events import Event
from store.projection import SESSIONS_SQL, fold, session_infos
from store.rows import transaction
from store.sqlite.usage import add_events, project_usage


def project_batch(db: sqlite3.Connection, events: list[Event]) -> None:
    """Fold one batch into the session tables: one upsert per session, agent and kind."""
    folded = fold(events)
    db.executemany(
        """INSERT INTO sessions VALUES (?1, ?2, ?3, ?4, ?5, coalesce(?6, ?5), ?7) ON CONFLICT (session)
            DO UPDATE SET events = events + excluded.events, last_seq = excluded.last_seq,
            first_ts = min(first_ts, excluded.first_ts),
            last_ts = CASE WHEN ?6 IS NULL THEN last_ts ELSE max(last_ts, ?6) END, head = excluded.head""",
        folded.sessions,
    )
    for table, column, counts in (("session_agents", "agent", folded.agents), ("session_kinds", "kind", folded.kinds)):
        if counts:  # agents and kinds only when there are any
            db.executemany(
                f"INSERT INTO {table} VALUES (?, ?, ?) ON CONFLICT (session, {column})"
                " DO UPDATE SET events = events + excluded.events",
                counts,
            )
    add_events(db, events)


def project_sessions(db: sqlite3.Connection, session: str | None = None) -> None:
    """Fill the session tables from the log, for one session or (None) all of them."""
    where, params = ("", ()) if session is None else (" WHERE session = ?", (session,))
    for table in ("sessions", "session_agents", "session_kinds"):
        db.execute(f"DELETE FROM {table}" + where, params)
    db.execute("INSERT INTO sessions " + SESSIONS_SQL.format(where=where), params)
    agents = " AND agent IS NOT NULL" if where else " WHERE agent IS NOT NULL"
    db.execute(
        f"INSERT INTO session_agents SELECT session, agent, count(*) FROM events{where}{agents}"
        " GROUP BY session, agent",
        params,
    )
    db.execute(
        f"INSERT INTO session_kinds SELECT session, kind, count(*) FROM events{where} GROUP BY session, kind", params
    )
    project_usage(db, session)


def rebuild_projections(db: sqlite3.Connection) -> int:
    """Refill every session table from the log; the number of sessions."""
    with transaction(db):
        project_sessions(db)
        count: int = db.execute("SELECT count(*) FROM sessions").fetchone()[0]
    return count


def read_sessions(db: sqlite3.Connection, name: str | None) -> list[SessionInfo]:
    """Every session, the one last active first (store/kinds.py says what counts); or the one that
    ``name`` names, or is a unique prefix of."""
    if name is None:
        rows = db.execute("SELECT * FROM sessions ORDER BY last_ts DESC, last_seq DESC").fetchall()
    else:
        rows = db.execute("SELECT * FROM sessions WHERE session = ?", (name,)).fetchall()
        if not rows:
            rows = db.execute(
                "SELECT * FROM sessions WHERE substr(session, 1, ?) = ? LIMIT 6", (len(name), name)
            ).fetchall()
            found = {row[0]: row for row in rows}
            rows = [found[resolve_prefix(name, list(found), "session")]]
    agents: dict[str, dict[str, int]] = defaultdict(dict)
    kinds: dict[str, dict[str, int]] = defaultdict(dict)
    for table, into in (("session_agents", agents), ("session_kinds", kinds)):
        sql = f"SELECT * FROM {table}"
        params: tuple[str, ...] = ()
        if name is not None:
            sql += " WHERE session = ?"
            params = (rows[0][0],)
        for session, item, count in db.execute(sql + " ORDER BY events DESC", params):
            into[session][item] = count
    return session_infos(rows, agents, kinds)
