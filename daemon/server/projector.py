"""The projector: the store's derived tables (the search index, the session tables, the usage
projection and its claims, the Merkle tree) brought up to the log behind the group committer.

An append's transaction holds the log alone, so an acknowledged append has not yet reached those
tables. The projector has the store apply what was committed (``EventStore.project``) a batch at a
time: once ``BATCH_EVENTS`` are waiting, or ``DELAY_S`` after the first of them was committed,
whichever comes first, and once more when the daemon stops. A read of those tables never waits
for it: the store applies what is left before any such read (search after a record, usage after
an append, `verify` against the latest head), so the read sees every append acknowledged before
it. What a crash leaves unapplied the store applies from the log when it next opens
(store/sqlite/projector.py). The lifecycle and the other components decide from the committed
events themselves (daemon/server/process.py hands them over), never from these tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from daemon.component import Component
from store.base import EventStore
from store.errors import TokaError
from store.events import Event

log = logging.getLogger("toka.daemon")

# Events waiting before they are applied at once: a transaction of the derived tables costs about
# as much as a one-event append's, so it is shared by a batch of appends; at this size one takes
# some tens of milliseconds, which an append arriving meanwhile waits behind.
BATCH_EVENTS = 500
# How long the first event committed waits for others to join it (a lone writer's appends a
# second apart are each applied alone, a burst's together).
DELAY_S = 0.05


class Projector(Component):
    def __init__(self, store: EventStore) -> None:
        self._store = store
        self._wake = asyncio.Event()
        self._full = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self.batches = 0  # applied by the projector itself, for status and tests

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="projector")

    def committed(self, events: list[Event], own: bool) -> None:
        waiting = self._store.unprojected()
        if waiting:
            self._wake.set()
            if waiting >= BATCH_EVENTS:
                self._full.set()

    async def stop(self, deadline: float = 0.0) -> None:
        """Apply what is left (the committer has stopped before): a clean stop leaves the tables
        at the log's end."""
        self._closing = True
        self._wake.set()
        self._full.set()
        if self._task is not None:
            await self._task

    async def _run(self) -> None:
        while not self._closing:
            await self._wake.wait()
            if not self._full.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._full.wait(), DELAY_S)
            self._wake.clear()
            self._full.clear()
            await self._project()
        await self._project()

    async def _project(self) -> None:
        if not self._store.unprojected():
            return  # a read applied them first
        try:
            await self._store.project()
        except TokaError as exc:  # committed all the same: the next batch, read or start applies them
            log.warning("applying committed events to the derived tables failed: %s", exc.message)
            return
        self.batches += 1
