"""Standing in for an older toka in the tests of upgrades: its migrations, and what its append did."""

from __future__ import annotations

import sqlite3

import pytest

from store.events import Event
from store.merkle import Frontier
from store.sqlite import projector
from store.sqlite import schema as migrations
from store.sqlite.tree import Tree


def as_older_toka(context: pytest.MonkeyPatch, steps: int) -> None:
    """Within ``context``, stand in for a toka of the first ``steps`` migrations. One from before
    m013 kept no tracking record of the derived tables: its append applied its batch to them in
    the same transaction, so there was never anything to catch up."""
    tracking = migrations.MIGRATIONS.index(migrations.m014_projected) < steps
    context.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:steps])
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
