"""Following a log that other daemons append to too (PostgreSQL): every event reaches this
daemon's components and subscribers once, in seq order, whoever committed it.

The daemon's own commits are published at once when they follow the last event it has seen,
which is the usual case. Otherwise (another daemon committed in between) they wait while the
follower reads the gap from the store, and the two are published in seq order. The store's
``follow`` wakes the follower on each notice of another daemon's commit, on a short poll and
after a reconnect; a wake with nothing new costs one indexed query.

Appends and catch-up reads take turns on :attr:`Follower.turn`, so a commit of this daemon is
always handed over as its own before a catch-up can read it back as someone else's: usage is
evaluated by the daemon that recorded it (``own``), while every daemon projects every event.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from store.base import EventQuery, EventStore
from store.errors import TokaError
from store.events import Event

log = logging.getLogger("toka.daemon")

# Events read per catch-up query.
PAGE = 1000

Publish = Callable[[list[Event], bool], None]  # (events in seq order, whether this daemon committed them)
Reconnected = Callable[[], Coroutine[Any, Any, None]]


class Follower:
    def __init__(
        self,
        store: EventStore,
        publish: Publish,
        reconnected: Reconnected,
        pending: Callable[[], bool] = lambda: False,
    ) -> None:
        self._store = store
        self._publish = publish
        # Run after the store reconnects (the daemon drains the hook spool), and again after any
        # catch-up that finds ``pending()`` true: a drain right at the reconnect can fail (another
        # connection still backing off) or miss a hook that spooled just after it.
        self._reconnected = reconnected
        self._pending = pending
        self._after_reconnect: asyncio.Task[None] | None = None
        self.turn = asyncio.Lock()
        self.seen = 0
        self._own: dict[int, Event] = {}
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.caught_up = 0  # events of other daemons published, for status and tests

    async def mark(self) -> None:
        """Take the log's last seq as seen: what follows it will be published."""
        latest = await self._store.query(EventQuery(order="desc", limit=1))
        self.seen = latest[0].seq if latest else 0

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._run(), name="follow"),
            asyncio.create_task(self._store.follow(self._wake.set, self._on_reconnect), name="listen"),
        ]

    async def stop(self) -> None:
        tasks = [*self._tasks, *([self._after_reconnect] if self._after_reconnect else [])]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def own(self, events: list[Event]) -> None:
        """Events this daemon committed (called while it holds :attr:`turn`)."""
        if not events:
            return
        # At once only when they follow what was seen without a gap: a group and the revisions it
        # amends are two appends (daemon/server/commit.py), and another daemon may commit between.
        if not self._own and events[0].seq == self.seen + 1 and events[-1].seq == self.seen + len(events):
            self.seen = events[-1].seq
            self._publish(events, True)
            return
        for event in events:
            self._own[event.seq] = event
        self._wake.set()

    def _on_reconnect(self) -> None:
        self._wake.set()
        self._run_reconnected()

    def _run_reconnected(self) -> None:
        """Start the reconnected callback, unless it is running already."""
        if self._after_reconnect is None or self._after_reconnect.done():
            self._after_reconnect = asyncio.create_task(self._reconnected(), name="after-reconnect")

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                async with self.turn:
                    await self._catch_up()
            except TokaError as exc:  # the database went away: the next wake (a poll) tries again
                log.warning("following the log: %s", exc.message)
                continue
            if self._pending():
                self._run_reconnected()

    async def _catch_up(self) -> None:
        """Publish what the log holds after :attr:`seen`: runs of other daemons' events and of
        this daemon's own that waited for them, in seq order."""
        while True:
            found = await self._store.query(EventQuery(after_seq=self.seen, limit=PAGE))
            flags = [self._own.pop(event.seq, None) is not None for event in found]
            for mine, pairs in itertools.groupby(zip(found, flags, strict=True), key=lambda pair: pair[1]):
                events = [event for event, _ in pairs]
                self.seen = events[-1].seq
                if not mine:
                    self.caught_up += len(events)
                self._publish(events, mine)
            if len(found) < PAGE:
                return
