"""The derived tables of the SQLite backend, kept behind the log: the search index, the session
tables, the usage projection with its claims, and the Merkle tree.

An append commits the log alone (store/sqlite/append.py). Its events are applied to the derived
tables afterwards, a batch of appends at a time, in a transaction that also moves the tracking
record ``projected`` (migration m013) to the last seq it applied; so the tables and the record
always agree, and a batch is applied once or not at all. Events committed but not applied when
the process ended are applied from the log when the store opens (:func:`catch_up`); the tree,
whose own size is its tracking record, is brought to the log by store/sqlite/tree.py's
``catch_up``. store/sqlite/store.py says when a batch is applied and which reads wait for it.
"""

from __future__ import annotations

import sqlite3

from store.base import CHUNK
from store.errors import StoreError
from store.events import Event
from store.merkle import Frontier
from store.rows import SELECT_INLINE, event_of, parents_of, transaction
from store.sqlite.projections import project_batch
from store.sqlite.search import index_events
from store.sqlite.tree import Tree, grow

TRACKED = "tables"  # the one tracking record: every derived table but the tree moves with it


def tracked_seq(db: sqlite3.Connection) -> int:
    """The last seq applied to the derived tables."""
    row = db.execute("SELECT seq FROM projected WHERE name = ?", (TRACKED,)).fetchone()
    return int(row[0]) if row else 0


def apply_events(db: sqlite3.Connection, events: list[Event], tree: Tree | None) -> Frontier | None:
    """Inside a transaction: ``events`` (in seq order, after the tracked seq) applied to every
    derived table and the tracking record moved to the last; the tree's frontier after them."""
    index_events(db, events)
    project_batch(db, events)
    grown = None
    if tree is not None:
        grown = grow(db, tree, events[0].seq - 1, [(e.seq, e.id) for e in events])
    db.execute("UPDATE projected SET seq = ? WHERE name = ?", (events[-1].seq, TRACKED))
    return grown


def project_events(db: sqlite3.Connection, events: list[Event], tree: Tree | None) -> None:
    """``events`` applied in a transaction of their own; the tree's frontier kept once committed."""
    with transaction(db):
        grown = apply_events(db, events, tree)
    if tree is not None and grown is not None:
        tree.frontier = grown


def unapplied(db: sqlite3.Connection, after: int) -> list[Event]:
    """The committed events after seq ``after``, up to CHUNK of them. One whose payload cannot be
    read (`toka verify` reports it) is applied with an empty one: it still counts in its session
    and is a leaf of the tree."""
    rows = db.execute(SELECT_INLINE + " WHERE e.seq > ? ORDER BY e.seq LIMIT ?", (after, CHUNK)).fetchall()
    events = []
    for row in rows:
        try:
            events.append(event_of(row))
        except StoreError:
            events.append(Event(row[0], row[1], row[2], row[3], row[4], row[5], parents_of(row[6]), row[7], row[8], {}))
    return events


def catch_up(db: sqlite3.Connection) -> int:
    """At open, before anything else is written: the events the tables have not seen applied from
    the log, a transaction per CHUNK (the tree is brought up by store/sqlite/tree.py's own
    ``catch_up``); the number applied."""
    applied = 0
    while events := unapplied(db, tracked_seq(db)):
        with transaction(db):
            apply_events(db, events, None)
        applied += len(events)
    return applied


def catch_up_in_transaction(db: sqlite3.Connection) -> None:
    """:func:`catch_up` within the caller's transaction (an upgrade's last step, which refills the
    session tables after it): the search index must not miss what the tables did not see."""
    while events := unapplied(db, tracked_seq(db)):
        apply_events(db, events, None)


def mark_projected(db: sqlite3.Connection) -> None:
    """Every event applied, as after the tables were refilled from the whole log."""
    db.execute("UPDATE projected SET seq = (SELECT coalesce(max(seq), 0) FROM events) WHERE name = ?", (TRACKED,))
