"""The projections of the log, each event applied alone: one a projection cannot apply is skipped.

The tables components keep (daemon/component.py: the agents', the state machines', the
dependency graph, the memory's) are kept by applying events of their kinds in log order: at
start-up (:meth:`Projections.load`, a replay of the log) and as each group commits
(:meth:`Projections.committed`). Every event reaches them here and only here, so one guard
holds for all of them: an event a projection cannot apply (written by an older version, or into
the database file past the daemon's checks) is logged once, with its seq, its kind and the
projection, counted in ``toka status`` (``projections``), and skipped. It stops neither the
replay, nor the group committer, nor the other projections.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

from daemon.component import Projection
from store.base import EventQuery, EventStore
from store.events import Event

log = logging.getLogger("toka.daemon")

# The skipped events status lists (the count covers them all).
RECENT = 10


class Projections:
    def __init__(self, projections: Sequence[Projection]) -> None:
        self._all = tuple(projections)
        self._by_kind: dict[str, list[Projection]] = {}
        for projection in self._all:
            for kind in projection.kinds:
                self._by_kind.setdefault(kind, []).append(projection)
        self.skipped = 0
        self._recent: deque[dict[str, Any]] = deque(maxlen=RECENT)

    async def load(self, store: EventStore, through: int | None = None) -> None:
        """Replay the log into each projection, in log order: up to seq ``through`` when given
        (on a shared log, what follows it is handed over by the follower, daemon/server/follow.py)."""
        before = None if through is None else through + 1
        for projection in self._all:
            query = EventQuery(session=projection.session, kinds=projection.kinds, before_seq=before)
            async for event in store.scan(query):
                self._apply(projection, event)

    def committed(self, events: Iterable[Event]) -> None:
        """Apply events just committed, in log order, to the projections of their kinds."""
        by_kind = self._by_kind
        for event in events:
            for projection in by_kind.get(event.kind, ()):
                if projection.session is None or projection.session == event.session:
                    self._apply(projection, event)

    def _apply(self, projection: Projection, event: Event) -> None:
        try:
            projection.apply(event)
        except Exception as exc:  # whatever the event holds, the log goes on being applied
            self.skipped += 1
            reason = f"{type(exc).__name__}: {exc}"[:200]
            self._recent.append(
                {
                    "seq": event.seq,
                    "id": event.id,
                    "kind": event.kind,
                    "projection": projection.name,
                    "reason": reason,
                }
            )
            log.error(
                "event seq %d (%s, session %r) skipped: the %s projection cannot apply it (%s)",
                event.seq,
                event.kind,
                event.session,
                projection.name,
                reason,
            )

    def status(self) -> dict[str, Any]:
        """``{skipped, recent}``: how many events were skipped since start-up, the last few of them."""
        return {"skipped": self.skipped, "recent": list(self._recent)}
