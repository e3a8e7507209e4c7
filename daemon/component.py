"""What every component of the daemon is to the daemon: the protocol the server drives them by.

The server (daemon/server/components.py) builds each component from the :class:`~daemon.core.Core`
(the log, appending to it, the hub of committed events, the settings, the paths, the clock) and
the components below it, and keeps them in one list, in start order. The daemon then, for each:

- **load**: replays the log once at start-up into every component's :meth:`~Component.projection`
  (the tables it keeps, applied event by event through one guard, daemon/server/projections.py),
  and afterwards hands each committed event to the same projections;
- **start**: :meth:`~Component.start`, in list order, before the socket answers;
- **committed**: :meth:`~Component.committed` with each group of events as it commits, ``own`` when
  this daemon committed them (on a log other daemons share it hands over theirs too);
- **stop**: :meth:`~Component.stop`, in reverse order, each within the shutdown deadline.

A component overrides what it takes part in; the rest does nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from store.events import Event


@dataclass(frozen=True, slots=True)
class Projection:
    """A table a component keeps from the log: the events of ``kinds`` (of ``session`` only,
    when given), each handed to ``apply`` in log order."""

    name: str  # as `toka status` names it when an event is skipped
    kinds: tuple[str, ...]
    apply: Callable[[Event], None]
    session: str | None = None


class Component:
    def projection(self) -> Projection | None:
        """The table this component keeps from the log, if any."""
        return None

    async def start(self) -> None:
        """Begin the component's own work (its tasks, timers, listening)."""

    def committed(self, events: list[Event], own: bool) -> None:
        """Events just committed, in seq order; ``own``: this daemon committed them."""

    async def stop(self, deadline: float) -> None:
        """Finish within ``deadline`` seconds: what is under way completes or is left for the next start."""
