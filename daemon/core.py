"""The core every server-side component is built from: the log, how to append to it, the hub of
committed events, the settings, the daemon's paths and the clock. Components take it in their
constructor, with the components below them, and nothing else of the daemon; the server
(daemon/server/components.py) builds one and the components around it."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from daemon.config import Settings
from daemon.paths import Paths
from daemon.rpc.hub import Hub
from store.base import AppendResult, EventStore
from store.events import NewEvent

# Appending goes through the group committer: answered once the events committed.
Append = Callable[[Sequence[NewEvent]], Awaitable[list[AppendResult]]]
# Waits until the events up to a seq have reached the daemon's projections (False: they had not
# within the server's bound); what a write awaits before answering from a projection
# (daemon/server/handover.py).
HandedOver = Callable[[int], Awaitable[bool]]


async def at_once(seq: int) -> bool:
    """The hand-over of a log that projects each commit as it is made (the tests' cores)."""
    return True


@dataclass(frozen=True, slots=True)
class Core:
    store: EventStore
    append: Append
    settings: Settings
    paths: Paths
    clock: Callable[[], float] = field(default=time.time)  # seconds since the epoch
    handed_over: HandedOver = field(default=at_once)
    hub: Hub = field(default_factory=Hub)

    def now_us(self) -> int:
        """The clock in microseconds since the epoch, as event timestamps are."""
        return int(self.clock() * 1_000_000)
