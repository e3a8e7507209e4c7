"""The derived tables of the PostgreSQL backend, kept behind the log: the search text, the session
tables and the usage projection with its claims (the tree is each daemon's own, in memory:
store/postgres/tree.py).

An append writes the log alone (store/postgres/append.py). Any daemon brings the derived tables
up to the log's end afterwards: one transaction per CHUNK of events, which first locks the
tracking record (``projected``, step p011) with ``FOR UPDATE``, so that the daemons of a team
apply each event once and in seq order, reads the events after the seq it holds, applies them and
moves it. Appends never wait for it: they take the append lock, not this row. Seqs commit in order
(the append lock), so the events after the tracked seq that a transaction sees have no gaps to be
filled later.
"""

from __future__ import annotations

from psycopg import AsyncConnection

from store.base import CHUNK
from store.errors import StoreError
from store.events import Event
from store.postgres import projections, search
from store.postgres.projections import columns, project_batch
from store.postgres.reads import HOLD_APPENDS, fetch_rows
from store.postgres.search import index_rows
from store.postgres.usage import add_events
from store.rows import SELECT, event_of, parents_of

TRACKED = "tables"
# Whether the tables have not yet applied the log's last event: two index lookups.
BEHIND = (
    "SELECT coalesce((SELECT max(seq) FROM events), 0) > coalesce((SELECT seq FROM projected WHERE name = 'tables'), 0)"
)


async def behind(conn: AsyncConnection) -> bool:
    return bool((await fetch_rows(conn, BEHIND, ()))[0][0])


async def apply_events(conn: AsyncConnection, events: list[Event]) -> None:
    """Inside a transaction: ``events`` (in seq order, after the tracked seq) applied to every
    derived table, and the tracking record moved to the last."""
    texts = index_rows(events)
    if texts:
        await conn.execute(
            "INSERT INTO search_text SELECT seq, text, words::tsvector"
            " FROM unnest(%b::bigint[], %b::text[], %b::text[]) AS t (seq, text, words)",
            columns(texts),
        )
    await project_batch(conn, events)
    await add_events(conn, events)
    await conn.execute("UPDATE projected SET seq = %s WHERE name = %s", (events[-1].seq, TRACKED))


async def _unapplied(conn: AsyncConnection) -> list[Event]:
    """The events after the tracked seq, up to CHUNK, the tracking record locked for the rest of
    the transaction. One whose payload cannot be read is applied with an empty one (as SQLite's)."""
    await conn.execute("SELECT seq FROM projected WHERE name = %s FOR UPDATE", (TRACKED,))
    sql = SELECT + " WHERE e.seq > (SELECT seq FROM projected WHERE name = ?) ORDER BY e.seq LIMIT ?"
    events = []
    for row in await fetch_rows(conn, sql, (TRACKED, CHUNK)):
        try:
            events.append(event_of(row))
        except StoreError:
            events.append(Event(row[0], row[1], row[2], row[3], row[4], row[5], parents_of(row[6]), row[7], row[8], {}))
    return events


async def catch_up(conn: AsyncConnection) -> int:
    """Every event committed so far applied, a transaction per CHUNK; the number applied (by this
    call: another daemon may apply some meanwhile)."""
    applied = 0
    while True:
        # Pipelined: BEGIN, the lock and the read cost one round trip, the writes and the commit
        # another, instead of one each.
        async with conn.pipeline(), conn.transaction():
            events = await _unapplied(conn)
            if not events:
                return applied
            await apply_events(conn, events)
        applied += len(events)
        if len(events) < CHUNK:  # the read saw every commit before it: nothing is left to ask for
            return applied


async def catch_up_in_transaction(conn: AsyncConnection) -> None:
    """:func:`catch_up` within the caller's transaction (a refill of some tables from the whole log
    comes after it, so that the others miss nothing)."""
    while events := await _unapplied(conn):
        await apply_events(conn, events)


async def rebuild_projections(conn: AsyncConnection) -> int:
    """The session tables and the usage projection refilled from the whole log (the number of
    sessions), in one transaction that holds appends back and first applies what the search text
    had not, so that the tables agree again at the log's end."""
    async with conn.transaction():
        await conn.execute(HOLD_APPENDS)
        await catch_up_in_transaction(conn)
        return await projections.rebuild_projections(conn)


async def rebuild_search_index(conn: AsyncConnection) -> int:
    """The search text refilled from the whole log (the number of events with text), as
    :func:`rebuild_projections` does the others."""
    async with conn.transaction():
        await conn.execute(HOLD_APPENDS)
        await catch_up_in_transaction(conn)
        return await search.rebuild_search_index(conn)
