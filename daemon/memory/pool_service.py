"""The memory pool as the daemon runs it: a :class:`~daemon.memory.pool.MemoryPool`, the sweeper
task that drops expired entries, and the recording of pressure crossings in the log.

The daemon holds one :class:`PoolService`; the ``pool.*`` ops (daemon/memory/pool_ops.py) call it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from daemon.component import Component
from daemon.core import Core
from daemon.memory.pool import Item, MemoryPool, PutResult
from daemon.memory.pressure import POOL_SESSION, PRESSURE_KIND, health_document
from daemon.memory.settings import PoolSettings
from store.errors import TokaError, UsageError

log = logging.getLogger("toka.daemon")

# A sweeper that has not run for this many intervals is reported as late.
SWEEP_LATE_INTERVALS = 3


class PoolService(Component):
    """The pool as the daemon runs it: operations that record the pressure crossings they
    cause (answered after the events commit, so a client that reads the log next sees them),
    and the sweeper task that drops expired entries every ``sweep_s`` seconds."""

    def __init__(self, core: Core, pool: MemoryPool | None = None, sweep_s: float | None = None) -> None:
        """The pool of ``pool.capacity_bytes`` swept every ``pool.sweep_s``, unless given."""
        settings = core.settings[PoolSettings]
        sweep_s = settings.sweep_s if sweep_s is None else sweep_s
        if not sweep_s > 0:
            raise UsageError(f"the sweep interval must be positive, got {sweep_s!r}")
        self.pool = MemoryPool(settings.capacity_bytes, wall_clock_us=core.now_us) if pool is None else pool
        self.sweep_s = sweep_s
        self._append = core.append
        self._sweeper: asyncio.Task[None] | None = None
        self.sweeps = 0
        self.last_sweep: float | None = None  # on the pool's clock

    @property
    def sweeper_running(self) -> bool:
        return self._sweeper is not None and not self._sweeper.done()

    async def start(self) -> None:
        """Start the sweeper on the running loop."""
        if not self.sweeper_running:
            self._sweeper = asyncio.create_task(self._sweep_forever(), name="pool-sweeper")
            self._sweeper.add_done_callback(self._sweeper_ended)

    async def stop(self, deadline: float = 0.0) -> None:
        """Stop the sweeper and record what crossings are left; call before the committer closes."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        await self.record()

    async def put(self, key: str, value: bytes, ttl: float | None = None) -> PutResult:
        try:
            return self.pool.put(key, value, ttl)
        finally:
            await self.record()  # a rejected put may still have evicted its way across a level

    async def get(self, key: str) -> Item:
        try:
            return self.pool.get(key)
        finally:
            await self.record()  # an expired entry dropped on read lowers the fill

    async def delete(self, key: str) -> bool:
        deleted = self.pool.delete(key)
        await self.record()
        return deleted

    async def sweep_once(self) -> int:
        dropped = self.pool.sweep()
        self.sweeps += 1
        self.last_sweep = self.pool.clock()
        await self.record()
        return dropped

    async def record(self) -> None:
        """Append a ``pool.pressure`` event for each crossing not yet recorded."""
        crossings = self.pool.take_crossings()
        if not crossings:
            return
        from store.events import NewEvent

        events = [NewEvent(POOL_SESSION, PRESSURE_KIND, c.to_json()) for c in crossings]
        try:
            await self._append(events)
        except TokaError as exc:  # the log is closing or failing: the pool goes on without it
            log.warning("pool: %d pressure events not recorded: %s", len(events), exc.message)

    def stats(self) -> dict[str, Any]:
        return self.pool.stats() | {"sweeper": self._sweeper_json()}

    def health(self) -> dict[str, Any]:
        problems = self.pool.problems()
        if not self.sweeper_running:
            problems.append(
                {
                    "code": "sweeper",
                    "level": "warning",
                    "message": "the sweeper is not running: expired entries stay until a read or a put needs"
                    " their room (see `toka daemon logs`)",
                }
            )
        elif self.last_sweep is not None and self.pool.clock() - self.last_sweep > SWEEP_LATE_INTERVALS * self.sweep_s:
            late = self.pool.clock() - self.last_sweep
            problems.append(
                {
                    "code": "sweeper",
                    "level": "warning",
                    "message": f"the sweeper last ran {late:.0f}s ago (every {self.sweep_s:g}s expected):"
                    " the daemon is overloaded",
                }
            )
        pool = self.pool
        return health_document(problems, pool.used_bytes, pool.capacity_bytes, sweeper=self._sweeper_json())

    def _sweeper_json(self) -> dict[str, Any]:
        since = None if self.last_sweep is None else round(self.pool.clock() - self.last_sweep, 3)
        return {
            "running": self.sweeper_running,
            "interval_s": self.sweep_s,
            "sweeps": self.sweeps,
            "last_sweep_s": since,
        }

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.sweep_s)
            await self.sweep_once()

    @staticmethod
    def _sweeper_ended(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("pool: the sweeper stopped", exc_info=task.exception())
