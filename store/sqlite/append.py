"""The append path of the SQLite backend: one batch of new events, sealed and written in one
transaction.

The transaction writes the log alone: the events, each chained to its session's head and holding
its idempotency key and, when it is shorter than store/rows.py's INLINE_BELOW, its payload (most
events: a one-event commit then writes the events b-tree alone); the larger payloads go to
``blobs``, stored once by digest, zlib-compressed when that makes them smaller. Once it commits
the events are acknowledged; the search index, the session tables, the usage projection and the
Merkle tree follow behind, a batch of appends at a time (store/sqlite/projector.py).
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from typing import Any

from store.base import AppendResult
from store.events import Event, NewEvent
from store.rows import JSON_LIST, SELECT_INLINE, event_of, packed, row_payload, transaction
from store.sealer import SealedEvent, Sealer

# A session's last event: one step down the (session, seq) index.
HEAD = "SELECT id FROM events WHERE session = ? ORDER BY seq DESC LIMIT 1"
# An event's row (_event_row): its header, then its payload or NULL when that is in ``blobs``.
INSERT_EVENT = "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


def append_batch(db: sqlite3.Connection, batch: list[NewEvent]) -> list[AppendResult]:
    """Seal ``batch`` onto the log and write it; what became of each event, in order."""
    with transaction(db):
        next_seq = db.execute("SELECT coalesce(max(seq), 0) + 1 FROM events").fetchone()[0]

        def head_of(session: str) -> str | None:
            # From the log itself, not the session table: a chain never forks over a projection.
            row = db.execute(HEAD, (session,)).fetchone()
            return row[0] if row else None

        def by_id(event_id: str) -> Event | None:
            row = db.execute(SELECT_INLINE + " WHERE e.id = ?", (event_id,)).fetchone()
            if row is None:  # an event pruned away is held by the checkpoint that replaced it
                sql = SELECT_INLINE + " JOIN pruned p ON p.checkpoint = e.seq WHERE p.id = ?"
                row = db.execute(sql, (event_id,)).fetchone()
            return event_of(row) if row else None

        held = _held_keys(db, batch)
        sealer = Sealer(next_seq, head_of, lambda s, k: held.get((s, k)), by_id)
        results = sealer.seal_all(batch)
        if sealer.sealed:
            large = [item for item in sealer.sealed if row_payload(item.payload_bytes) is None]
            if large:
                _write_blobs(db, large)
            rows = [_event_row(item) for item in sealer.sealed]
            db.executemany(INSERT_EVENT, rows)
    return results


def _event_row(sealed: SealedEvent) -> tuple[Any, ...]:
    """The event's row: its header, and its payload when that is small enough to keep there."""
    e = sealed.event
    inline = row_payload(sealed.payload_bytes)
    return (e.seq, e.id, e.session, e.agent, e.kind, e.ts, ",".join(e.parents), e.digest, e.key, inline)


def _held_keys(db: sqlite3.Connection, batch: list[NewEvent]) -> dict[tuple[str, str], Event]:
    """The committed events that hold the batch's idempotency keys, by (session, key): one
    query per session of the batch instead of one per event."""
    keys: dict[str, list[str]] = defaultdict(list)
    for new in batch:
        if new.key is not None:
            keys[new.session].append(new.key)
    held = {}
    # Nothing was ever pruned from most logs: then no tombstone can hold a key.
    pruned_any = bool(keys) and db.execute("SELECT 1 FROM pruned LIMIT 1").fetchone() is not None
    for session, names in keys.items():
        rows = db.execute(
            SELECT_INLINE + " WHERE e.session = ? AND e.key IN " + JSON_LIST, (session, json.dumps(names))
        )
        for row in rows:
            held[(session, row[8])] = event_of(row)
        if not pruned_any:
            continue
        # A key of an event pruned away is held by the checkpoint that replaced it.
        pruned = db.execute(
            "SELECT p.key, " + SELECT_INLINE.removeprefix("SELECT ") + " JOIN pruned p ON p.checkpoint = e.seq"
            " WHERE p.session = ? AND p.key IN " + JSON_LIST,
            (session, json.dumps(names)),
        )
        for key, *row in pruned:
            held[(session, key)] = event_of(row)
    return held


def _write_blobs(db: sqlite3.Connection, large: list[SealedEvent]) -> None:
    """The rows of ``blobs`` for payloads too large to keep in their event's row; those stored
    already are left out before they are compressed for nothing."""
    sql = "SELECT digest FROM blobs WHERE digest IN " + JSON_LIST
    stored_already = {row[0] for row in db.execute(sql, (json.dumps([item.event.digest for item in large]),))}
    rows = {}
    for item in large:
        name, data = item.event.digest, item.payload_bytes
        if name in rows or name in stored_already:
            continue
        rows[name] = (name, len(data), *packed(data))
    db.executemany("INSERT OR IGNORE INTO blobs VALUES (?, ?, ?, ?)", rows.values())
