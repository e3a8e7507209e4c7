"""The usage projection of the PostgreSQL backend: SQLite's ``usage_buckets`` (store/usage.py
says what a row holds), kept by each append in its transaction, refilled by a rebuild, and
summed in SQL for the cost reports. The statements are store/sqlite/usage.py's, in
PostgreSQL's dialect, each table written with one multi-row statement."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable
from dataclasses import astuple

from psycopg import AsyncConnection

from store.events import Event
from store.query import bucket_where, dialect
from store.rows import decode_blob
from store.usage import DAY_US, UsageEvent, UsageRow, claimed_names, counted_rows, fold_usage

# Usage events read per step while the projection is refilled.
PAGE = 5000

_UPSERT = (
    "INSERT INTO usage_buckets AS u SELECT * FROM unnest(%b::bigint[], %b::text[], %b::text[], %b::text[],"
    " %b::int[], %b::bigint[], %b::bigint[], %b::bigint[], %b::bigint[], %b::bigint[], %b::bigint[], %b::bigint[],"
    " %b::bigint[], %b::bigint[]) ON CONFLICT (bucket, session, agent, model, prompt_class) DO UPDATE SET"
    " calls = u.calls + excluded.calls, input_tokens = u.input_tokens + excluded.input_tokens,"
    " output_tokens = u.output_tokens + excluded.output_tokens,"
    " cache_creation_tokens = u.cache_creation_tokens + excluded.cache_creation_tokens,"
    " cache_creation_1h_tokens = u.cache_creation_1h_tokens + excluded.cache_creation_1h_tokens,"
    " cache_read_tokens = u.cache_read_tokens + excluded.cache_read_tokens,"
    " first_ts = least(u.first_ts, excluded.first_ts), last_ts = greatest(u.last_ts, excluded.last_ts),"
    " telemetry_calls = u.telemetry_calls + excluded.telemetry_calls"
)
# The claims stored for a batch's requests (store/usage.py), and those the batch makes. Appends
# hold the append lock (store/postgres/append.py), so what is read here is still so at the insert.
_HELD = (
    "SELECT u.session, u.request, u.origin FROM usage_requests u"
    " JOIN unnest(%b::text[], %b::text[]) AS c (session, request) ON u.session = c.session AND u.request = c.request"
)
_CLAIM = "INSERT INTO usage_requests SELECT * FROM unnest(%b::text[], %b::text[], %b::text[]) ON CONFLICT DO NOTHING"


async def counted(conn: AsyncConnection, usage: list[UsageEvent]) -> list[UsageRow]:
    """The rows of the usage events that count: each request as its first source reported it
    (store/usage.py), the claims kept in ``usage_requests``; two statements whatever the batch."""
    named = claimed_names(usage)
    held: dict[tuple[str, str], str] = {}
    if named:
        cursor = await conn.execute(_HELD, [[n[0] for n in named], [n[1] for n in named]])
        held = {(session, name): origin for session, name, origin in await cursor.fetchall()}
    rows, claims = counted_rows(usage, held)
    if claims:
        await conn.execute(_CLAIM, [list(column) for column in zip(*claims, strict=True)])
    return rows


async def add_usage(conn: AsyncConnection, rows: Iterable[UsageRow]) -> None:
    """Fold usage rows into ``usage_buckets``: one statement, a row per key."""
    folded = fold_usage(rows)
    if folded:
        values = [astuple(row) for row in folded]
        await conn.execute(_UPSERT, [list(column) for column in zip(*values, strict=True)])


async def add_events(conn: AsyncConnection, events: list[Event]) -> None:
    """What an append's usage events add to the projection."""
    await add_usage(
        conn, await counted(conn, [(e.ts, e.session, e.agent, e.payload) for e in events if e.kind == "usage"])
    )


async def project_usage(conn: AsyncConnection) -> None:
    """Refill the projection from every usage event (inside the caller's transaction)."""
    await conn.execute("DELETE FROM usage_buckets")
    await conn.execute("DELETE FROM usage_requests")
    after = 0
    while True:
        cursor = await conn.execute(
            "SELECT e.seq, e.ts, e.session, e.agent, b.codec, b.data FROM events e JOIN blobs b ON b.digest = e.digest"
            " WHERE e.kind = 'usage' AND e.seq > %s ORDER BY e.seq LIMIT %s",
            (after, PAGE),
        )
        page = await cursor.fetchall()
        found = []
        for _, ts, session, agent, codec, data in page:
            try:
                payload = json.loads(decode_blob(codec, data))
            except (ValueError, zlib.error):
                continue  # a damaged payload is for `toka verify` to report; it counts nothing here
            if isinstance(payload, dict):
                found.append((ts, session, agent, payload))
        await add_usage(conn, await counted(conn, found))
        if len(page) < PAGE:
            return
        after = page[-1][0]


async def read_usage(
    conn: AsyncConnection, since: int | None, until: int | None, session: str | None
) -> list[UsageRow]:
    where, params = bucket_where(since, until, session)
    cursor = await conn.execute(dialect("SELECT * FROM usage_buckets" + where), params)
    return [UsageRow(*row) for row in await cursor.fetchall()]


async def sum_usage_rows(
    conn: AsyncConnection,
    since: int | None,
    until: int | None,
    width: int,
    offset: int,
    sessions: bool,
    session: str | None,
    models: list[str] | None,
) -> list[UsageRow]:
    """``EventStore.usage_sums`` in one GROUP BY (store/usage.py's ``sum_usage`` says what)."""
    where, params = bucket_where(since, until, session, None if models is None else ("model = ANY(?)", models))
    where = dialect(where)
    who = "session, agent" if sessions else "''::text, ''::text"
    sql = (
        # sum() of bigint is numeric in PostgreSQL: cast back, so the rows hold ints.
        f"SELECT min(bucket), {who}, model, prompt_class, sum(calls)::bigint, sum(input_tokens)::bigint,"
        " sum(output_tokens)::bigint, sum(cache_creation_tokens)::bigint, sum(cache_creation_1h_tokens)::bigint,"
        f" sum(cache_read_tokens)::bigint, min(first_ts), max(last_ts), sum(telemetry_calls)::bigint"
        f" FROM usage_buckets{where}"
        f" GROUP BY (bucket + %s) / %s, bucket / {DAY_US}, {'session, agent, ' if sessions else ''}model, prompt_class"
    )
    cursor = await conn.execute(sql, [*params, offset, width])
    return [UsageRow(*row) for row in await cursor.fetchall()]
