"""The append path of the PostgreSQL backend: one batch, sealed and written in one transaction,
by any number of daemons on one database.

**One chain, dense seqs.** Each append first takes one lock every toka writer takes, a
transaction-level advisory lock (:data:`APPEND_LOCK`): appends from every daemon then commit one
at a time (reads go on), so the next seq is the last one handed out (``log_end``, written in the
same transaction) plus one, seqs are dense and in commit order, and the head a batch chains
onto is the session's real head. A plain sequence would hand out numbers that commit out of
order (and skip those of a transaction rolled back), and a subscriber reading "seq > last" would
skip the late ones for good. The eventsourcing library's recorder gets the same order from
``LOCK TABLE ... IN EXCLUSIVE MODE``, which needs UPDATE, DELETE or TRUNCATE rights on the table;
the advisory lock lets toka's role hold only SELECT and INSERT on the log (docs/postgres.md). The lock is held for
the batch's own statements only: the daemon's group commit already makes one transaction of
what its clients sent together.

**Idempotent retries.** Each call carries a token (the daemon's idempotency key for the batch);
the transaction records it in ``append_batches`` with the ids it produced. A daemon that lost
the connection before the acknowledgement retries with the same token and, if the first try
committed, gets its answer back instead of writing the batch twice.

**Notification.** The transaction ends with ``pg_notify('toka_events', last seq)``, delivered at
commit to every daemon listening (store/postgres/store.py), which then reads what it has not seen.
"""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection, AsyncCursor

from store.base import AppendResult
from store.events import Event, NewEvent
from store.postgres.projections import columns
from store.postgres.schema import MIGRATION_LOCK
from store.rows import SELECT, event_of, packed
from store.sealer import SealedEvent, Sealer

CHANNEL = "toka_events"
# The advisory lock appends take (the migrations' lock, store/postgres/schema.py, plus one).
APPEND_LOCK = MIGRATION_LOCK + 1
# Each session's last event, from the log itself rather than the session table (a projection),
# so that no chain forks over a table left behind: one step down the (session, seq) index each.
# (None for a new session.)
# After the last seq ever handed out, not the largest still in the log: events deleted from its end
# leave their seqs empty, where verify finds them (store/postgres/verify.py).
NEXT_SEQ = "SELECT coalesce(greatest((SELECT max(seq) FROM events), (SELECT seq FROM log_end)), 0) + 1"
HEADS = "SELECT s, (SELECT id FROM events WHERE session = s ORDER BY seq DESC LIMIT 1) FROM unnest(%s::text[]) AS s"


async def append_batch(conn: AsyncConnection, batch: list[NewEvent], token: str, retry: bool) -> list[AppendResult]:
    """Seal ``batch`` onto the log and write it; on a ``retry``, first look for what an earlier
    try with ``token`` committed. Pipelined: the reads the seal needs cost one round trip, the
    writes and the commit another."""
    async with conn.pipeline(), conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (APPEND_LOCK,))
        if retry and (earlier := await _earlier_try(conn, token)) is not None:
            return earlier
        # Three statements sent at once; the first fetch waits for all three answers.
        last = await conn.execute(NEXT_SEQ)
        sessions = list({new.session for new in batch})
        head_rows = await conn.execute(HEADS, (sessions,))
        key_rows = await _held_keys(conn, batch)
        next_seq = (await last.fetchone())[0]  # type: ignore[index]
        heads: dict[str, str | None] = dict(await head_rows.fetchall())
        held = {(row[2], row[8]): event_of(row) for row in await key_rows.fetchall()} if key_rows else {}
        sealer = Sealer(next_seq, heads.get, lambda s, k: held.get((s, k)), lambda _: None)
        results = sealer.seal_all(batch)
        # An event with explicit parents (an import of an export) may be in the log already:
        # then seal again, knowing which, so that it is returned instead of written twice.
        explicit = [r.event.id for new, r in zip(batch, results, strict=True) if new.parents is not None]
        existing = await _events_by_id(conn, explicit) if explicit else {}
        if existing:
            sealer = Sealer(next_seq, heads.get, lambda s, k: held.get((s, k)), existing.get)
            results = sealer.seal_all(batch)
        if sealer.sealed:
            await _write(conn, sealer.sealed)
        await conn.execute(
            "INSERT INTO append_batches (token, ids, created) VALUES (%s, %s, %s)",
            (token, [r.event.id for r in results], [r.created for r in results]),
        )
    return results


async def _earlier_try(conn: AsyncConnection, token: str) -> list[AppendResult] | None:
    cursor = await conn.execute("SELECT ids, created FROM append_batches WHERE token = %s", (token,))
    row = await cursor.fetchone()
    if row is None:
        return None
    ids, created = row
    events = await _events_by_id(conn, ids)
    return [AppendResult(events[event_id], made) for event_id, made in zip(ids, created, strict=True)]


async def _held_keys(conn: AsyncConnection, batch: list[NewEvent]) -> AsyncCursor[Any] | None:
    """The query of the committed events holding the batch's idempotency keys (None: no keys)."""
    pairs = [(new.session, new.key) for new in batch if new.key is not None]
    if not pairs:
        return None
    return await conn.execute(
        SELECT + " WHERE (e.session, e.key) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
        ([s for s, _ in pairs], [k for _, k in pairs]),
    )


async def _events_by_id(conn: AsyncConnection, ids: list[str]) -> dict[str, Event]:
    cursor = await conn.execute(SELECT + " WHERE e.id = ANY(%s)", (ids,))
    return {row[1]: event_of(row) for row in await cursor.fetchall()}


async def _write(conn: AsyncConnection, sealed: list[SealedEvent]) -> None:
    """The blobs and events of a sealed batch, the log's end, and the notice of it (in the
    append's pipeline: sent without waiting for each other's answers). The derived tables follow
    behind (store/postgres/projector.py)."""
    events = [item.event for item in sealed]
    blobs = _blob_rows(sealed)
    # One statement per table, its rows as arrays (one per column, sent in binary): executemany
    # would send a statement per row, and text arrays cost a quoting pass per element.
    await conn.execute(
        "INSERT INTO blobs SELECT * FROM unnest(%b::text[], %b::bigint[], %b::smallint[], %b::bytea[])"
        " ON CONFLICT (digest) DO NOTHING",
        columns(blobs),
    )
    await conn.execute(
        "INSERT INTO events SELECT * FROM unnest(%b::bigint[], %b::text[], %b::text[], %b::text[], %b::text[],"
        " %b::bigint[], %b::text[], %b::text[], %b::text[])",
        columns(
            [(e.seq, e.id, e.session, e.agent, e.kind, e.ts, ",".join(e.parents), e.digest, e.key) for e in events]
        ),
    )
    await conn.execute(
        "INSERT INTO log_end (seq, id) VALUES (%s, %s)"
        " ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, id = excluded.id",
        (events[-1].seq, events[-1].id),
    )
    await conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, str(events[-1].seq)))


def _blob_rows(sealed: list[SealedEvent]) -> list[tuple[str, int, int, bytes]]:
    rows: dict[str, tuple[str, int, int, bytes]] = {}
    for item in sealed:
        name, data = item.event.digest, item.payload_bytes
        if name in rows:
            continue
        rows[name] = (name, len(data), *packed(data))
    return list(rows.values())


async def forget_old_batches(conn: AsyncConnection) -> None:
    """Drop the idempotency records of appends a day old: no retry comes that late."""
    await conn.execute("DELETE FROM append_batches WHERE at < now() - interval '1 day'")
