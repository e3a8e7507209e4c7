"""Standing in for an older toka in the tests of upgrades: its migrations, and what its append did."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from typing import Any

import pytest

from store import rows
from store.events import Event
from store.merkle import Frontier
from store.sealer import SealedEvent
from store.sqlite import append, projector, reads, retention, search, verify
from store.sqlite import schema as migrations
from store.sqlite.store import SqliteStore
from store.sqlite.tree import Tree


def as_older_toka(context: pytest.MonkeyPatch, steps: int) -> None:
    """Within ``context``, stand in for a toka of the first ``steps`` migrations. One from before
    m013 kept no tracking record of the derived tables: its append applied its batch to them in
    the same transaction, so there was never anything to catch up."""
    tracking = migrations.MIGRATIONS.index(migrations.m014_projected) < steps
    inline = migrations.MIGRATIONS.index(migrations.m015_inline_payloads) < steps
    context.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:steps])
    if not inline:
        _with_every_payload_in_blobs(context)
    if tracking:
        return

    def applied_untracked(db: sqlite3.Connection, events: list[Event], tree: Tree | None) -> Frontier | None:
        projector.index_events(db, events)  # looked up here: a test may stand in for an older index
        projector.project_batch(db, events)
        if tree is None:
            return None
        return projector.grow(db, tree, events[0].seq - 1, [(e.seq, e.id) for e in events])

    context.setattr(projector, "apply_events", applied_untracked)
    context.setattr(projector, "catch_up", lambda db: 0)


def _with_every_payload_in_blobs(context: pytest.MonkeyPatch) -> None:
    """A toka from before m015: its events had no payload column, every payload was in blobs."""

    def header_row(sealed: SealedEvent) -> tuple[Any, ...]:
        e = sealed.event
        return (e.seq, e.id, e.session, e.agent, e.kind, e.ts, ",".join(e.parents), e.digest, e.key)

    context.setattr(append, "row_payload", lambda data: None)
    context.setattr(append, "_event_row", header_row)
    context.setattr(append, "INSERT_EVENT", "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
    for module in (append, projector, reads, retention, search, verify):
        context.setattr(module, "SELECT_INLINE", rows.SELECT)
    context.setattr(SqliteStore, "parts", replace(SqliteStore.parts, select=rows.SELECT))
