"""The session tables and the usage projection of the SQLite backend: projections of the log, kept
up to date by each append.

``sessions`` holds a row per session (its event count, first and last seq and time, head
event); ``session_agents`` and ``session_kinds`` count its events per agent and per kind;
``usage_buckets`` sums its usage per quarter of an hour, agent, model and prompt class
(store/usage.py). They are derived data: each append folds its batch in (:func:`project_batch`),
a prune recounts its session, and :func:`rebuild_projections` refills them all from the log, as
an upgrade that adds a table must.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import astuple

from store.base import SessionInfo, resolve_prefix
from store.events import Event
from store.projection import SESSIONS_SQL, fold, session_infos
from store.query import bucket_where
from store.rows import JSON_LIST, decode_blob, transaction
from store.usage import DAY_US, UsageEvent, UsageRow, claimed_names, counted_rows, fold_usage

# Usage events read per step while the usage projection is refilled.
_USAGE_PAGE = 5000


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
    _add_usage(db, _counted(db, [(e.ts, e.session, e.agent, e.payload) for e in events if e.kind == "usage"]))


def _counted(db: sqlite3.Connection, usage: list[UsageEvent]) -> list[UsageRow]:
    """The rows of the usage events that count: each request as its first source reported it
    (store/usage.py), the claims kept in ``usage_requests``; two statements whatever the batch."""
    named = claimed_names(usage)
    held = {}
    if named:
        held = {
            (session, name): origin
            for session, name, origin in db.execute(
                "SELECT u.session, u.request, u.origin FROM json_each(?) j JOIN usage_requests u"
                " ON u.session = json_extract(j.value, '$[0]') AND u.request = json_extract(j.value, '$[1]')",
                (json.dumps(named),),
            )
        }
    rows, claims = counted_rows(usage, held)
    if claims:
        db.executemany("INSERT OR IGNORE INTO usage_requests VALUES (?, ?, ?)", claims)
    return rows


def _add_usage(db: sqlite3.Connection, rows: Iterable[UsageRow]) -> None:
    """Fold usage rows into ``usage_buckets``: one upsert per key."""
    folded = fold_usage(rows)
    if folded:
        db.executemany(
            """INSERT INTO usage_buckets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (bucket, session, agent, model, prompt_class) DO UPDATE SET
                calls = calls + excluded.calls,
                input_tokens = input_tokens + excluded.input_tokens,
                output_tokens = output_tokens + excluded.output_tokens,
                cache_creation_tokens = cache_creation_tokens + excluded.cache_creation_tokens,
                cache_creation_1h_tokens = cache_creation_1h_tokens + excluded.cache_creation_1h_tokens,
                cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
                first_ts = min(first_ts, excluded.first_ts), last_ts = max(last_ts, excluded.last_ts),
                telemetry_calls = telemetry_calls + excluded.telemetry_calls""",
            [astuple(row) for row in folded],
        )


def project_usage(db: sqlite3.Connection, session: str | None = None) -> None:
    """Refill the usage projection from the usage events, for one session or (None) all of them."""
    where, params = ("", ()) if session is None else (" WHERE session = ?", (session,))
    db.execute("DELETE FROM usage_buckets" + where, params)
    db.execute("DELETE FROM usage_requests" + where, params)
    where = " AND e.session = ?" if session is not None else ""
    rows = db.execute(
        "SELECT e.ts, e.session, e.agent, b.codec, b.data FROM events e JOIN blobs b ON b.digest = e.digest"
        " WHERE e.kind = 'usage'" + where + " ORDER BY e.seq",  # in log order: a request's first source counts
        params,
    )
    while page := rows.fetchmany(_USAGE_PAGE):
        found = []
        for ts, name, agent, codec, data in page:
            try:
                payload = json.loads(decode_blob(codec, data))
            except (ValueError, zlib.error):
                continue  # a damaged payload is for `toka verify` to report; it counts nothing here
            if isinstance(payload, dict):
                found.append((ts, name, agent, payload))
        _add_usage(db, _counted(db, found))


def read_usage(db: sqlite3.Connection, since: int | None, until: int | None, session: str | None) -> list[UsageRow]:
    """The rows of the buckets that start at or after ``since`` and before ``until``, of one
    session or of all."""
    where, params = bucket_where(since, until, session)
    return [UsageRow(*row) for row in db.execute("SELECT * FROM usage_buckets" + where, params)]


def sum_usage_rows(
    db: sqlite3.Connection,
    since: int | None,
    until: int | None,
    width: int,
    offset: int,
    sessions: bool,
    session: str | None,
    models: list[str] | None,
) -> list[UsageRow]:
    """``EventStore.usage_sums`` in one GROUP BY (store/usage.py's ``sum_usage`` says what)."""
    chosen = None if models is None else ("model IN " + JSON_LIST, json.dumps(models))
    where, params = bucket_where(since, until, session, chosen)
    who = "session, agent" if sessions else "'', ''"
    sql = (
        f"SELECT min(bucket), {who}, model, prompt_class, sum(calls), sum(input_tokens), sum(output_tokens),"
        " sum(cache_creation_tokens), sum(cache_creation_1h_tokens), sum(cache_read_tokens), min(first_ts),"
        f" max(last_ts), sum(telemetry_calls) FROM usage_buckets{where}"
        f" GROUP BY (bucket + ?) / ?, bucket / {DAY_US}, {'session, agent, ' if sessions else ''}model, prompt_class"
    )
    return [UsageRow(*row) for row in db.execute(sql, [*params, offset, width])]


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
