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

**One round trip when the daemon knows the log's end.** Sealing needs the next seq, each
session's head and the keys already held, which live on the server: read first, then write,
that is two round trips, and a transaction's BEGIN and COMMIT on top outside a pipeline. But a
daemon that wrote the last append knows them already (:class:`LogEnd`, what its appends left).
It then seals on that, and sends the whole batch as one call of ``toka_append`` (step
p012_append_at_once), a single statement and so a transaction of its own: under the same append
lock, it checks that the log's end is the one expected (the next seq, each session's head, no
key of the batch held) and writes exactly what the two-trip path would write, or, when another
daemon appended meanwhile, writes nothing and says so; the batch is then sealed again on what
the two-trip path reads under the lock. The order, the chain and the idempotency records are the
same either way: only the daemon's guess is saved, never a check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import AsyncConnection, AsyncCursor

from store.base import AppendResult
from store.events import Event, NewEvent
from store.postgres.projections import columns
from store.postgres.schema import APPEND_LOCK
from store.rows import SELECT, event_of, packed
from store.sealer import SealedEvent, Sealer

CHANNEL = "toka_events"
# Each session's last event, from the log itself rather than the session table (a projection),
# so that no chain forks over a table left behind: one step down the (session, seq) index each.
# (None for a new session.)
# After the last seq ever handed out, not the largest still in the log: events deleted from its end
# leave their seqs empty, where verify finds them (store/postgres/verify.py).
NEXT_SEQ = "SELECT coalesce(greatest((SELECT max(seq) FROM events), (SELECT seq FROM log_end)), 0) + 1"
HEADS = "SELECT s, (SELECT id FROM events WHERE session = s ORDER BY seq DESC LIMIT 1) FROM unnest(%s::text[]) AS s"


# The sessions whose heads a LogEnd remembers, at most: a daemon writing to more forgets them all
# and reads them again (each costs the two-trip path once).
MAX_HEADS = 10_000
# Every argument cast to its parameter's type: an array of NULLs alone (no agent, no key) has none.
AT_ONCE = (
    "SELECT toka_append(%b::bigint, %b::text[], %b::text[], %b::text[], %b::text[],"
    " %b::text[], %b::bigint[], %b::smallint[], %b::bytea[],"
    " %b::bigint[], %b::text[], %b::text[], %b::text[], %b::text[], %b::bigint[], %b::text[], %b::text[], %b::text[],"
    " %b::text)"
)
# The same for one event, each array built on the server from its one element: psycopg dumps a
# list in Python, element by element, which cost more of the daemon's time than the rest of a
# one-event append.
ONE_AT_ONCE = (
    "SELECT toka_append(%b::bigint, ARRAY[%b::text], ARRAY[%b::text], ARRAY[%b::text], ARRAY[%b::text],"
    " ARRAY[%b::text], ARRAY[%b::bigint], ARRAY[%b::smallint], ARRAY[%b::bytea],"
    " ARRAY[%b::bigint], ARRAY[%b::text], ARRAY[%b::text], ARRAY[%b::text], ARRAY[%b::text], ARRAY[%b::bigint],"
    " ARRAY[%b::text], ARRAY[%b::text], ARRAY[%b::text], %b::text)"
)


@dataclass
class LogEnd:
    """What this daemon's last append left at the log's end: the next seq (None: not known) and
    the heads of the sessions it read or wrote since. A guess only: ``toka_append`` checks it."""

    next_seq: int | None = None
    heads: dict[str, str | None] = field(default_factory=dict)
    at_once: bool = True  # False once the role was refused toka_append

    def moved(self, next_seq: int | None, heads: dict[str, str | None]) -> None:
        self.next_seq = next_seq
        if len(self.heads) + len(heads) > MAX_HEADS:
            self.heads.clear()
        self.heads.update(heads)


async def append_batch(
    conn: AsyncConnection, batch: list[NewEvent], token: str, retry: bool, end: LogEnd | None = None
) -> list[AppendResult]:
    """Seal ``batch`` onto the log and write it; on a ``retry``, first look for what an earlier
    try with ``token`` committed. One round trip when ``end`` is still the log's end, else (no
    ``end``, or events with explicit parents, whose ids may be in the log already) two; ``end``
    then holds what this append left."""
    end = end if end is not None else LogEnd()
    if end.at_once and not retry and end.next_seq is not None and batch and all(n.parents is None for n in batch):
        try:
            results = await _append_at_once(conn, batch, token, end)
        except psycopg.errors.InsufficientPrivilege:
            # A role not granted EXECUTE on toka_append (a database that revoked it from PUBLIC):
            # the two-trip append needs only the tables' rights.
            end.at_once = False
            results = None
        if results is not None:
            return results
    end.next_seq = None  # not known until this append's reads
    return await _append_after_reading(conn, batch, token, retry, end)


async def _append_at_once(
    conn: AsyncConnection, batch: list[NewEvent], token: str, end: LogEnd
) -> list[AppendResult] | None:
    """The batch sealed on ``end`` and written by one call of ``toka_append``; None when the log's
    end was not ``end`` (nothing written)."""
    assert end.next_seq is not None
    expected = {new.session: end.heads.get(new.session) for new in batch}
    sealer = Sealer(end.next_seq, expected.get, lambda s, k: None, lambda _: None)
    results = sealer.seal_all(batch)
    events = [item.event for item in sealer.sealed]
    if len(events) == 1:
        # A key of None is held by no event: the check finds nothing for it.
        blob, event = _blob_rows(sealer.sealed)[0], _event_rows(events)[0]
        head = expected[event[2]]
        params: tuple[Any, ...] = (end.next_seq, event[2], head, event[2], event[8], *blob, *event, token)
        cursor = await conn.execute(ONE_AT_ONCE, params)
    else:
        keys = [(new.session, new.key) for new in batch if new.key is not None]
        params = (
            end.next_seq,
            list(expected),
            list(expected.values()),
            [s for s, _ in keys],
            [k for _, k in keys],
            *columns(_blob_rows(sealer.sealed)),
            *columns(_event_rows(events)),
            token,
        )
        cursor = await conn.execute(AT_ONCE, params)
    if not (await cursor.fetchone())[0]:  # type: ignore[index]
        return None
    end.moved(sealer.next_seq, {e.session: e.id for e in events})
    return results


async def _append_after_reading(
    conn: AsyncConnection, batch: list[NewEvent], token: str, retry: bool, end: LogEnd
) -> list[AppendResult]:
    """The two-trip append: under the lock, the seal's inputs read (one round trip, pipelined),
    then the writes and the commit (another)."""
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
    # Committed: the next append may be sent at once.
    end.moved(sealer.next_seq, {**heads, **{item.event.session: item.event.id for item in sealer.sealed}})
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
        columns(_event_rows(events)),
    )
    await conn.execute(
        "INSERT INTO log_end (seq, id) VALUES (%s, %s)"
        " ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, id = excluded.id",
        (events[-1].seq, events[-1].id),
    )
    await conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, str(events[-1].seq)))


def _event_rows(events: list[Event]) -> list[tuple[Any, ...]]:
    return [(e.seq, e.id, e.session, e.agent, e.kind, e.ts, ",".join(e.parents), e.digest, e.key) for e in events]


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
