"""The memory pool: short-lived working memory that agents share through the daemon.

A pool holds byte values under string keys, bounded by a byte budget (the values' lengths; keys
and bookkeeping are not counted, so a value of exactly the capacity fits an empty pool). An
entry may carry a time to live; the background sweeper drops entries once it has passed, and a
read or a put that needs room drops them too. When a put needs room, expired entries go first,
then the least recently used (ties broken by creation: the older goes first). Nothing here is
durable: the pool empties when the daemon stops. What the log keeps is the pool's pressure:
each time the fill crosses 75% (warning) or 90% (critical) of the capacity, up or down, a
``pool.pressure`` event in session ``toka.pool`` records it.

:class:`MemoryPool` is the pool itself: plain synchronous code with an injectable clock, so its
tests control time. Its pressure levels and health are daemon/memory/pressure.py; what the daemon
runs is :class:`~daemon.memory.pool_service.PoolService`: the pool, the sweeper task, and the
recording of pressure crossings through the group committer.
"""

from __future__ import annotations

import heapq
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from daemon.memory.pressure import (
    CRITICAL_PCT,
    REJECTION_WINDOW,
    WARNING_PCT,
    Crossing,
    fill_pct,
    health_document,
    near_capacity,
    pressure_level,
    rejections,
)
from daemon.memory.settings import DEFAULT_CAPACITY
from store.errors import Conflict, NotFound, UsageError

MAX_KEY_CHARS = 1024
# The eviction heaps are rebuilt when stale items outnumber live entries by this factor.
COMPACT_FACTOR = 2


def size_bucket(size: int) -> int:
    """The histogram bucket of a value: the smallest power of two at or above its size (0 for empty)."""
    return 0 if size == 0 else 1 << (size - 1).bit_length()


def check_key(key: Any) -> str:
    if not isinstance(key, str) or not key:
        raise UsageError("a pool key must be a non-empty string")
    if len(key) > MAX_KEY_CHARS:
        raise UsageError(f"a pool key is at most {MAX_KEY_CHARS} characters, got {len(key)}")
    return key


def check_ttl(ttl: Any) -> float | None:
    """Seconds to live: None for no expiry, 0 for already expired."""
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or math.isnan(ttl) or ttl < 0:
        raise UsageError(f"ttl must be a number of seconds (0 or more) or null, got {ttl!r}")
    return None if math.isinf(ttl) else float(ttl)


@dataclass(slots=True)
class _Entry:
    key: str
    value: bytes
    created: float  # on the pool's clock
    created_us: int  # wall clock, microseconds since the epoch, for people
    expires: float | None
    last_access: float
    seq: int  # order of creation, the last tie-breaker
    stamp: int  # bumped on each access: a heap item with another stamp is stale
    hits: int = 0


@dataclass(frozen=True, slots=True)
class Item:
    """An entry as the pool hands it out."""

    key: str
    value: bytes
    size: int
    created_us: int
    age_s: float
    ttl_left: float | None
    hits: int


@dataclass(frozen=True, slots=True)
class PutResult:
    key: str
    size: int
    stored: bool  # False for a ttl of 0: the value expired as it arrived
    replaced: bool  # the key held a value before
    evicted: int  # entries dropped to make room (expired or least recently used)


def _wall_us() -> int:
    return time.time_ns() // 1000


class MemoryPool:
    """A byte-bounded key/value pool with TTLs and LRU eviction. Not thread-safe; the daemon
    calls it from its event loop only.

    Two heaps find victims quickly without scanning: one ordered by expiry, one by (last
    access, creation, seq). Accesses push a fresh item instead of moving the old one, so heap
    items can be stale; a stale item is skipped when popped, and the heaps are rebuilt once
    stale items dominate.
    """

    def __init__(
        self,
        capacity_bytes: int = DEFAULT_CAPACITY,
        clock: Callable[[], float] = time.monotonic,
        wall_clock_us: Callable[[], int] = _wall_us,
    ) -> None:
        if isinstance(capacity_bytes, bool) or not isinstance(capacity_bytes, int) or capacity_bytes < 1:
            raise UsageError(f"the pool capacity must be a positive number of bytes, got {capacity_bytes!r}")
        self.capacity_bytes = capacity_bytes
        self.clock = clock
        self._wall_us = wall_clock_us
        self._entries: dict[str, _Entry] = {}
        self._lru: list[tuple[float, float, int, int, str]] = []  # (last access, created, seq, stamp, key)
        self._expiry: list[tuple[float, int, str]] = []  # (expires, seq, key)
        self._seq = 0
        self._stamp = 0
        self.used_bytes = 0
        self.high_water_bytes = 0
        self.level = "ok"
        self._crossings: list[Crossing] = []
        self.puts_accepted = 0
        self.puts_rejected = 0
        self.hits = 0
        self.misses = 0
        self.deletes = 0
        self.evicted_expired = 0
        self.evicted_lru = 0
        self.size_histogram: dict[int, int] = {}
        self._recent_puts: deque[bool] = deque(maxlen=REJECTION_WINDOW)  # True for a rejection

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        entry = self._entries.get(key) if isinstance(key, str) else None
        return entry is not None and not self._expired(entry, self.clock())

    # ----------------------------------------------------------------------------------------
    # Operations

    def put(self, key: str, value: bytes, ttl: float | None = None) -> PutResult:
        """Store ``value`` under ``key`` (replacing what it held), making room if need be.

        Raises Conflict when the value is larger than the whole pool, or still does not fit
        once expired entries are dropped and least recently used ones evicted.
        """
        check_key(key)
        ttl = check_ttl(ttl)
        if not isinstance(value, bytes):
            raise UsageError(f"a pool value must be bytes, got {type(value).__name__}")
        size = len(value)
        if size > self.capacity_bytes:
            self._rejected()
            raise Conflict(
                f"a value of {size} bytes is larger than the whole pool ({self.capacity_bytes} bytes)",
                "store it as an event or a blob instead, or raise pool.capacity_bytes",
            )
        now = self.clock()
        old = self._entries.pop(key, None)
        if old is not None:
            self.used_bytes -= len(old.value)
        if ttl == 0:
            self._accepted(size)
            self._observe()
            return PutResult(key, size, stored=False, replaced=old is not None, evicted=0)
        evicted = self._make_room(size, now)
        if self.used_bytes + size > self.capacity_bytes:
            self._rejected()
            self._observe()
            raise Conflict(
                f"a value of {size} bytes does not fit: {self.used_bytes} of {self.capacity_bytes} bytes are in"
                " use after evicting what could be evicted",
                "delete entries with `toka pool rm`, or raise pool.capacity_bytes",
            )
        self._seq += 1
        self._stamp += 1
        entry = _Entry(
            key,
            value,
            now,
            self._wall_us(),
            None if ttl is None else now + ttl,
            now,
            self._seq,
            self._stamp,
        )
        self._entries[key] = entry
        self.used_bytes += size
        heapq.heappush(self._lru, (now, now, entry.seq, entry.stamp, key))
        if entry.expires is not None:
            heapq.heappush(self._expiry, (entry.expires, entry.seq, key))
        self._accepted(size)
        self._observe()
        self._compact()
        return PutResult(key, size, stored=True, replaced=old is not None, evicted=evicted)

    def get(self, key: str) -> Item:
        """The entry under ``key``, counted as an access; NotFound when missing or expired."""
        entry = self._entries.get(key)
        now = self.clock()
        if entry is not None and self._expired(entry, now):
            self._drop(entry)
            self.evicted_expired += 1
            self._observe()
            entry = None
        if entry is None:
            self.misses += 1
            raise NotFound(f"no pool entry {key!r}", "it may have expired or been evicted; see `toka pool list`")
        self.hits += 1
        entry.hits += 1
        self._stamp += 1
        entry.stamp = self._stamp
        entry.last_access = now
        heapq.heappush(self._lru, (now, entry.created, entry.seq, entry.stamp, key))
        self._compact()
        return self._item(entry, now)

    def delete(self, key: str) -> bool:
        """Remove the entry; False when there was none (an expired one counts as none)."""
        entry = self._entries.get(key)
        if entry is None:
            return False
        expired = self._expired(entry, self.clock())
        self._drop(entry)
        if expired:
            self.evicted_expired += 1
        else:
            self.deletes += 1
        self._observe()
        return not expired

    def sweep(self) -> int:
        """Drop every expired entry; the number dropped."""
        dropped = self._drop_expired(self.clock())
        self._observe()
        self._compact()
        return dropped

    def items(self, prefix: str = "") -> list[Item]:
        """Live entries whose key starts with ``prefix``, by key; reading them is no access."""
        now = self.clock()
        return [
            self._item(e, now)
            for key, e in sorted(self._entries.items())
            if key.startswith(prefix) and not self._expired(e, now)
        ]

    def take_crossings(self) -> list[Crossing]:
        """The pressure crossings since the last call, oldest first, for the caller to record."""
        crossings, self._crossings = self._crossings, []
        return crossings

    # ----------------------------------------------------------------------------------------
    # Figures

    @property
    def fill_pct(self) -> float:
        return fill_pct(self.used_bytes, self.capacity_bytes)

    def stats(self) -> dict[str, Any]:
        return {
            "capacity_bytes": self.capacity_bytes,
            "used_bytes": self.used_bytes,
            "free_bytes": self.capacity_bytes - self.used_bytes,
            "fill_pct": self.fill_pct,
            "level": self.level,
            "thresholds": {"warning_pct": WARNING_PCT, "critical_pct": CRITICAL_PCT},
            "high_water_bytes": self.high_water_bytes,
            "entries": len(self._entries),
            "puts": {"accepted": self.puts_accepted, "rejected": self.puts_rejected},
            "gets": {"hits": self.hits, "misses": self.misses},
            "deletes": self.deletes,
            "evictions": {"expired": self.evicted_expired, "lru": self.evicted_lru},
            "size_histogram": {str(bucket): n for bucket, n in sorted(self.size_histogram.items())},
        }

    def problems(self) -> list[dict[str, str]]:
        """What is wrong with the pool itself, in words, worst first."""
        found = [near_capacity(self.level, self.used_bytes, self.capacity_bytes), rejections(self._recent_puts)]
        return [problem for problem in found if problem is not None]

    def health(self) -> dict[str, Any]:
        return health_document(self.problems(), self.used_bytes, self.capacity_bytes)

    # ----------------------------------------------------------------------------------------
    # Internals

    @staticmethod
    def _expired(entry: _Entry, now: float) -> bool:
        return entry.expires is not None and now >= entry.expires

    def _item(self, entry: _Entry, now: float) -> Item:
        ttl_left = None if entry.expires is None else round(max(0.0, entry.expires - now), 3)
        return Item(
            entry.key,
            entry.value,
            len(entry.value),
            entry.created_us,
            round(now - entry.created, 3),
            ttl_left,
            entry.hits,
        )

    def _drop(self, entry: _Entry) -> None:
        del self._entries[entry.key]
        self.used_bytes -= len(entry.value)

    def _drop_expired(self, now: float) -> int:
        dropped = 0
        while self._expiry and self._expiry[0][0] <= now:
            _, seq, key = heapq.heappop(self._expiry)
            entry = self._entries.get(key)
            if entry is not None and entry.seq == seq:
                self._drop(entry)
                dropped += 1
        self.evicted_expired += dropped
        return dropped

    def _make_room(self, size: int, now: float) -> int:
        if self.used_bytes + size <= self.capacity_bytes:
            return 0
        evicted = self._drop_expired(now)
        while self.used_bytes + size > self.capacity_bytes and self._lru:
            *_, seq, stamp, key = heapq.heappop(self._lru)
            entry = self._entries.get(key)
            if entry is not None and entry.seq == seq and entry.stamp == stamp:
                self._drop(entry)
                self.evicted_lru += 1
                evicted += 1
        return evicted

    def _accepted(self, size: int) -> None:
        self.puts_accepted += 1
        self._recent_puts.append(False)
        bucket = size_bucket(size)
        self.size_histogram[bucket] = self.size_histogram.get(bucket, 0) + 1

    def _rejected(self) -> None:
        self.puts_rejected += 1
        self._recent_puts.append(True)

    def _observe(self) -> None:
        """Note the high water and any crossing of a pressure level."""
        self.high_water_bytes = max(self.high_water_bytes, self.used_bytes)
        level = pressure_level(self.used_bytes, self.capacity_bytes)
        if level != self.level:
            self._crossings.append(Crossing(self.level, level, self.used_bytes, self.capacity_bytes))
            self.level = level

    def _compact(self) -> None:
        live = len(self._entries)
        if len(self._lru) > COMPACT_FACTOR * live + 64:
            self._lru = [(e.last_access, e.created, e.seq, e.stamp, e.key) for e in self._entries.values()]
            heapq.heapify(self._lru)
        if len(self._expiry) > COMPACT_FACTOR * live + 64:
            self._expiry = [(e.expires, e.seq, e.key) for e in self._entries.values() if e.expires is not None]
            heapq.heapify(self._expiry)
