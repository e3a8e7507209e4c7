"""The usage projection of the SQLite backend: ``usage_buckets`` (store/usage.py says what a row
holds), kept by each append in its transaction, refilled by a rebuild, and summed in SQL for the
cost reports; with ``usage_requests``, the claims that make a request count once.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Iterable
from dataclasses import astuple

from store.events import Event
from store.query import bucket_where
from store.rows import INLINE_JOIN, INLINE_PAYLOAD, JSON_LIST, decode_blob
from store.usage import DAY_US, UsageEvent, UsageRow, claimed_names, counted_rows, fold_usage

# Usage events read per step while the usage projection is refilled.
PAGE = 5000


def counted(db: sqlite3.Connection, usage: list[UsageEvent]) -> list[UsageRow]:
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


def add_events(db: sqlite3.Connection, events: list[Event]) -> None:
    """What an append's usage events add to the projection."""
    add_usage(db, counted(db, [(e.ts, e.session, e.agent, e.payload) for e in events if e.kind == "usage"]))


def add_usage(db: sqlite3.Connection, rows: Iterable[UsageRow]) -> None:
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
        f"SELECT e.ts, e.session, e.agent, {INLINE_PAYLOAD} FROM events e {INLINE_JOIN}"
        " WHERE e.kind = 'usage'" + where + " ORDER BY e.seq",  # in log order: a request's first source counts
        params,
    )
    while page := rows.fetchmany(PAGE):
        found = []
        for ts, name, agent, codec, data in page:
            try:
                payload = json.loads(decode_blob(codec, data))
            except (ValueError, zlib.error):
                continue  # a damaged payload is for `toka verify` to report; it counts nothing here
            if isinstance(payload, dict):
                found.append((ts, name, agent, payload))
        add_usage(db, counted(db, found))


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
