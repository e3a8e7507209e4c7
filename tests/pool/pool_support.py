"""What the pool's tests share: a clock that moves only when told, pools on it, and an append
that keeps what it is given."""

from __future__ import annotations

from daemon.core import Append, Core
from daemon.memory.pool import MemoryPool
from daemon.paths import resolve_paths
from daemon.sections import SECTIONS
from store.base import AppendResult
from store.ephemeral import EphemeralStore
from store.events import NewEvent


class Clock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def make(capacity: int, clock: Clock) -> MemoryPool:
    return MemoryPool(capacity, clock=clock, wall_clock_us=lambda: 1_700_000_000_000_000)


class Recorder:
    """Stands in for GroupCommitter.append: keeps what it was given."""

    def __init__(self) -> None:
        self.events: list[NewEvent] = []

    async def __call__(self, events: list[NewEvent]) -> list[AppendResult]:
        self.events.extend(events)
        return []


def core_with(append: Append) -> Core:
    """A core whose appends go to ``append`` (a :class:`Recorder`, or one that fails)."""
    return Core(EphemeralStore(), append, SECTIONS.defaults(), resolve_paths())
