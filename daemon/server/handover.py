"""How far the log has been handed over to the daemon's components (the projections: agents,
states, memory, ...), so that a write can wait for its own events before it answers.

On SQLite the group committer hands a group over as it commits, before the writer resumes; on a
log other daemons share (PostgreSQL) the follower hands events over in seq order
(daemon/server/follow.py), and a daemon's own commit waits there while the follower reads what
another daemon committed before it. A write that answers from a projection, or whose next read
must show it, waits with :meth:`Handover.wait` for the seq it was given.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging

log = logging.getLogger("toka.daemon")

# How long a write waits for its events to be handed over. They are committed already; only a
# database that went away right after the commit (the follower reads again once it is back) keeps
# them that long, and the write then answers from what it appended rather than hang.
WAIT_S = 10.0


class Handover:
    def __init__(self) -> None:
        self.seq = 0  # every event up to it has been handed over
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []  # a heap by seq
        self._order = itertools.count()

    def advance(self, seq: int) -> None:
        """Events up to ``seq`` have been handed over: wake whoever waits for them."""
        if seq <= self.seq:
            return
        self.seq = seq
        while self._waiting and self._waiting[0][0] <= seq:
            _, _, future = heapq.heappop(self._waiting)
            if not future.done():
                future.set_result(None)

    async def wait(self, seq: int, timeout: float = WAIT_S) -> bool:
        """Until every event up to ``seq`` has been handed over; False when ``timeout`` passed first."""
        if seq <= self.seq:
            return True
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (seq, next(self._order), future))
        try:
            await asyncio.wait_for(future, timeout)
        except TimeoutError:
            log.warning(
                "seq %d not handed over after %.0f s (at %d): answering from what was appended", seq, timeout, self.seq
            )
            return False
        return True
