"""Subscriptions: newly committed events, fanned out to the clients that asked for them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from store.base import EventQuery
from store.events import Event
from store.query import matches

# Events a subscriber may fall behind by before it is dropped, so that one stalled reader
# cannot make the daemon hold an unbounded backlog.
MAX_BACKLOG = 100_000


class Subscription:
    def __init__(self, session: str | None, kinds: tuple[str, ...]) -> None:
        self.filter = EventQuery(session=session, kinds=kinds)
        self.queue: asyncio.Queue[Event] = asyncio.Queue(MAX_BACKLOG)
        self.overflowed = False


class Hub:
    def __init__(self) -> None:
        self._subscriptions: set[Subscription] = set()

    def __len__(self) -> int:
        return len(self._subscriptions)

    def subscribe(self, session: str | None, kinds: tuple[str, ...]) -> Subscription:
        subscription = Subscription(session, kinds)
        self._subscriptions.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self._subscriptions.discard(subscription)

    def publish(self, events: Iterable[Event]) -> None:
        if not self._subscriptions:
            return
        for event in events:
            for subscription in list(self._subscriptions):
                if subscription.overflowed or not matches(event, subscription.filter):
                    continue
                try:
                    subscription.queue.put_nowait(event)
                except asyncio.QueueFull:
                    subscription.overflowed = True
