"""The memory pool's pressure: how full it is, in levels, and what is wrong with it, in words.

The fill is ``ok`` below 75% of the capacity, ``warning`` from 75% and ``critical`` from 90%.
Each time it crosses a level, up or down, the pool notes a :class:`Crossing`, which the daemon
records as a ``pool.pressure`` event in session ``toka.pool``. The health answer names the
worst level among the pool's problems (near capacity, many rejected puts, a sweeper that does
not run), each in words.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from daemon.contract.kinds import Kind

# Pressure levels, as % of the capacity; the lifecycle's context thresholds use the same numbers.
WARNING_PCT = 75
CRITICAL_PCT = 90
LEVELS = ("ok", "warning", "critical")
POOL_SESSION = "toka.pool"
PRESSURE_KIND = Kind.POOL_PRESSURE
# Health judges rejections over the most recent puts, so an old burst does not count forever.
REJECTION_WINDOW = 100
REJECTION_MIN_PUTS = 10  # fewer recent puts than this say nothing about a rate
REJECTION_WARNING = 0.10
REJECTION_CRITICAL = 0.50

Problem = dict[str, str]


def pressure_level(used_bytes: int, capacity_bytes: int) -> str:
    """ok, warning (at or above 75% of the capacity) or critical (at or above 90%)."""
    if used_bytes * 100 >= capacity_bytes * CRITICAL_PCT:
        return "critical"
    if used_bytes * 100 >= capacity_bytes * WARNING_PCT:
        return "warning"
    return "ok"


def fill_pct(used_bytes: int, capacity_bytes: int) -> float:
    return round(100 * used_bytes / capacity_bytes, 2)


@dataclass(frozen=True, slots=True)
class Crossing:
    """The fill moved from one pressure level to another."""

    from_level: str
    to_level: str
    used_bytes: int
    capacity_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "from": self.from_level,
            "to": self.to_level,
            "used_bytes": self.used_bytes,
            "capacity_bytes": self.capacity_bytes,
        }


def near_capacity(level: str, used_bytes: int, capacity_bytes: int) -> Problem | None:
    """The problem of a fill at ``level``; None when it is ok."""
    if level == "ok":
        return None
    threshold = CRITICAL_PCT if level == "critical" else WARNING_PCT
    return {
        "code": "near_capacity",
        "level": level,
        "message": f"the pool is {fill_pct(used_bytes, capacity_bytes):g}% full ({used_bytes} of {capacity_bytes}"
        f" bytes, {level} at {threshold}%): puts evict the least recently used entries",
    }


def rejections(recent_puts: Collection[bool]) -> Problem | None:
    """The problem of too many rejected puts among ``recent_puts`` (True for a rejection); None
    when there are few enough, or too few puts to judge."""
    recent = len(recent_puts)
    rejected = sum(recent_puts)
    if recent < REJECTION_MIN_PUTS or rejected / recent < REJECTION_WARNING:
        return None
    return {
        "code": "rejections",
        "level": "critical" if rejected / recent >= REJECTION_CRITICAL else "warning",
        "message": f"{rejected} of the last {recent} puts were rejected: their values do not fit the pool",
    }


def health_document(problems: list[Problem], used_bytes: int, capacity_bytes: int, **extra: Any) -> dict[str, Any]:
    """The health answer: the worst level among the problems, each problem in words, a summary."""
    level = max((p["level"] for p in problems), key=LEVELS.index, default="ok")
    problems = sorted(problems, key=lambda p: -LEVELS.index(p["level"]))
    return {
        "level": level,
        "summary": "; ".join(p["message"] for p in problems) or "the pool is healthy",
        "problems": problems,
        "fill_pct": fill_pct(used_bytes, capacity_bytes),
        "used_bytes": used_bytes,
        "capacity_bytes": capacity_bytes,
        **extra,
    }
