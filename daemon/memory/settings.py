"""The ``[pool]`` section of config.toml: the memory pool's size and how often expired entries are
swept (daemon/memory/pool.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from daemon.config import DAY_S, GIB
from daemon.setting import setting

# The memory pool's defaults: room for the working notes of many agents, small next to the
# machine; expired entries linger at most the sweep interval before they are dropped.
DEFAULT_CAPACITY = 64 * 1024 * 1024
DEFAULT_SWEEP_S = 5.0


@dataclass(frozen=True)
class PoolSettings:
    table: ClassVar[str] = "pool"

    capacity_bytes: int = setting(
        DEFAULT_CAPACITY,
        "bytes the memory pool holds (values only); puts past it evict the least recently used entries",
        env="TOKA_POOL_CAPACITY_BYTES",
        bounds=(1, 1024 * GIB),
    )
    sweep_s: float = setting(
        DEFAULT_SWEEP_S,
        "seconds between two sweeps of expired pool entries",
        env="TOKA_POOL_SWEEP_S",
        bounds=(0.01, DAY_S),
    )
