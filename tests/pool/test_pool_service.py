"""The PoolService: its sweeper and the pressure events it records, with an in-test list
standing in for the log's append."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pool_support import Clock, Recorder, core_with, make

from daemon.memory.pool import MemoryPool
from daemon.memory.pool_service import PoolService
from daemon.memory.pressure import POOL_SESSION, PRESSURE_KIND
from store.base import AppendResult
from store.errors import Conflict, UsageError
from store.events import NewEvent


def test_service_records_each_crossing_as_a_pool_pressure_event(clock: Clock) -> None:
    recorder = Recorder()
    service = PoolService(core_with(recorder), make(100, clock), sweep_s=60)

    async def main() -> None:
        await service.put("a", b"x" * 80)
        await service.put("b", b"x" * 15)
        await service.delete("a")

    asyncio.run(main())
    assert [(e.session, e.kind) for e in recorder.events] == [(POOL_SESSION, PRESSURE_KIND)] * 3
    assert [e.payload for e in recorder.events] == [
        {"from": "ok", "to": "warning", "used_bytes": 80, "capacity_bytes": 100},
        {"from": "warning", "to": "critical", "used_bytes": 95, "capacity_bytes": 100},
        {"from": "critical", "to": "ok", "used_bytes": 15, "capacity_bytes": 100},
    ]


def test_service_sweep_once_drops_expired_and_records_the_fall(clock: Clock) -> None:
    recorder = Recorder()
    service = PoolService(core_with(recorder), make(100, clock), sweep_s=60)

    async def main() -> int:
        await service.put("k", b"x" * 90, ttl=1)
        clock.advance(1)
        return await service.sweep_once()

    assert asyncio.run(main()) == 1
    assert [(e.payload["from"], e.payload["to"]) for e in recorder.events] == [("ok", "critical"), ("critical", "ok")]
    assert service.sweeps == 1 and service.last_sweep == clock.now
    assert len(service.pool) == 0


def test_sweeper_task_runs_at_its_interval_and_stops() -> None:
    recorder = Recorder()
    service = PoolService(core_with(recorder), MemoryPool(100), sweep_s=0.01)

    async def main() -> tuple[bool, dict[str, Any], bool]:
        await service.put("k", b"x" * 10, ttl=0.02)
        await service.start()
        for _ in range(500):
            await asyncio.sleep(0.01)
            if "k" not in service.pool.items() and len(service.pool) == 0 and service.sweeps >= 2:
                break
        running = service.sweeper_running
        health = service.health()
        await service.stop()
        return running, health, service.sweeper_running

    running, health, after = asyncio.run(main())
    assert running and not after
    assert len(service.pool) == 0
    assert service.pool.stats()["evictions"]["expired"] == 1
    assert health["level"] == "ok"
    assert health["sweeper"]["running"] is True


def test_health_says_when_the_sweeper_is_not_running(clock: Clock) -> None:
    service = PoolService(core_with(Recorder()), make(100, clock), sweep_s=5)
    health = service.health()
    assert health["level"] == "warning"
    assert health["problems"][0]["code"] == "sweeper"
    assert "sweeper is not running" in health["summary"]


def test_health_says_when_the_sweeper_is_late(clock: Clock) -> None:
    service = PoolService(core_with(Recorder()), make(100, clock), sweep_s=5)

    async def main() -> dict[str, Any]:
        await service.start()
        await service.sweep_once()
        clock.advance(60)
        health = service.health()
        await service.stop()
        return health

    health = asyncio.run(main())
    assert health["level"] == "warning"
    assert "last ran 60s ago" in health["summary"]


def test_a_failing_log_does_not_fail_the_pool(clock: Clock) -> None:
    async def closing(events: list[NewEvent]) -> list[AppendResult]:
        raise Conflict("the daemon is shutting down")

    service = PoolService(core_with(closing), make(100, clock), sweep_s=5)

    async def main() -> None:
        await service.put("k", b"x" * 95)

    asyncio.run(main())
    assert service.pool.level == "critical"
    assert service.pool.take_crossings() == []


def test_sweep_interval_must_be_positive(clock: Clock) -> None:
    with pytest.raises(UsageError):
        PoolService(core_with(Recorder()), make(100, clock), sweep_s=0)
