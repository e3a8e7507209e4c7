"""The memory: durable, scoped key-value memory, as a projection of ``memory.*`` events.

Scopes are ``global``, ``agent:<id>``, ``session:<name>`` and ``trace:<id>``. A value is any JSON
(at most ``MAX_VALUE_BYTES`` as canonical JSON); each key has a version, 1 for its first value
and one more for each change, deletions included. ``set`` and ``delete`` may name the version
they expect (compare-and-set): when the key is at another version the write is refused with
``Conflict`` and nothing is stored. An entry may expire (``ttl`` seconds after it was set, more
than 0 and at most ``MAX_TTL_S``, ten years: an expired entry reads as absent, and its key's next
version starts where it stopped) and may be pinned (``toka context`` puts pinned entries in first).

Every change is an event in session ``toka.memory``: ``memory.set`` {scope, key, value, version,
ttl, pinned} and ``memory.delete`` {scope, key, version}. The current table is kept by applying
those in log order (daemon/server/projections.py replays them at start-up), so replaying the log
gives the same table.

Each change carries the idempotency key :func:`version_key` (the scope and key's digest and the
version it writes), which the store holds to one event per session and key, deciding in the
append's own transaction: on a log several daemons share, two writers of one version cannot
both commit, whatever each daemon's table has seen. A write whose version was taken waits until
the change that took it reaches this table, then checks the expected version again (a
compare-and-set answers Conflict) or, without one, writes the next version. A write answers once
its event is in the table, with what it wrote, so the next read on this daemon shows it.
"""

from __future__ import annotations

import asyncio
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from daemon.component import Component, Projection
from daemon.contract import results
from daemon.contract.kinds import Kind
from daemon.core import Core
from store.base import EventQuery
from store.errors import Busy, Conflict, NotFound, UsageError
from store.events import Event, NewEvent, canonical_json, digest, format_ts

SESSION = "toka.memory"
SET, DELETE = Kind.MEMORY_SET, Kind.MEMORY_DELETE
MAX_KEY_CHARS = 256
MAX_VALUE_BYTES = 1024 * 1024
# The longest an entry may live, in seconds: ten years of 365 days. The MCP tool's schema says
# the same (toka_cli/mcp/tools.py).
MAX_TTL_S = 10 * 365 * 24 * 3600
# The latest expiry an entry can have and be written out (timestamps stop at the year 9999): an
# entry of the log expiring later, which an older version let in, cannot be applied.
_LATEST_US = int(datetime(9999, 12, 30, tzinfo=UTC).timestamp()) * 1_000_000
_SCOPE = re.compile(r"^(global|(agent|session|trace):[^\x00-\x1f]{1,256})$")
# Versions a write tries when other daemons keep taking the one it meant to write: each try
# follows a change it had not seen, so running out means the key changes faster than a round trip.
WRITE_TRIES = 8


@dataclass
class Entry:
    scope: str
    key: str
    value: Any
    version: int
    pinned: bool
    set_ts: int  # µs, the event's time
    expires_ts: int | None  # µs
    seq: int
    deleted: bool = False

    def live(self, now_us: int) -> bool:
        return not self.deleted and (self.expires_ts is None or now_us < self.expires_ts)

    def to_json(self) -> results.MemoryEntry:
        return {
            "scope": self.scope,
            "key": self.key,
            "value": self.value,
            "version": self.version,
            "pinned": self.pinned,
            "set_ts": format_ts(self.set_ts),
            "expires_ts": None if self.expires_ts is None else format_ts(self.expires_ts),
            "seq": self.seq,
        }


def check_scope(scope: Any) -> str:
    if not isinstance(scope, str) or not _SCOPE.match(scope):
        raise UsageError(f"unknown scope {scope!r}", "scopes: global, agent:<id>, session:<name>, trace:<id>")
    return scope


def check_ttl(ttl: Any) -> float | None:
    if ttl is not None and (
        isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not (math.isfinite(ttl) and 0 < ttl <= MAX_TTL_S)
    ):
        raise UsageError(
            f"ttl must be a number of seconds, more than 0 and at most {MAX_TTL_S:,} (10 years), got {ttl!r}",
            "leave the ttl out to keep the value until it is changed or deleted",
        )
    return ttl


def _size(value: Any) -> int:
    """The size of ``value`` as canonical JSON; UsageError when it is not JSON (NaN, Infinity)."""
    try:
        return len(canonical_json(value))
    except ValueError:
        raise UsageError(
            "the value holds a number JSON cannot carry (NaN or Infinity)", 'store it as a string, e.g. "NaN"'
        ) from None


def check_key(key: Any) -> str:
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS or any(ord(c) < 32 for c in key):
        raise UsageError(f"a key is 1 to {MAX_KEY_CHARS} printable characters, got {str(key)[:40]!r}")
    return key


def version_key(scope: str, key: str, version: int) -> str:
    """The idempotency key of the change that writes ``version`` of ``scope``'s ``key``: one
    event per version, as the store holds a key to one event of its session."""
    return f"{digest(canonical_json([scope, key]))}:{version}"


def entry_of(event: Event) -> Entry | None:
    """The entry a memory event leaves; None for any other event (or a malformed one).
    ValueError for an expiry no entry can have (daemon/server/projections.py skips the event)."""
    if event.session != SESSION or event.kind not in (SET, DELETE):
        return None
    payload = event.payload
    scope, key, version = payload.get("scope"), payload.get("key"), payload.get("version")
    if not isinstance(scope, str) or not isinstance(key, str) or not isinstance(version, int):
        return None
    ttl = payload.get("ttl")
    expires = _expiry(event.ts, ttl) if isinstance(ttl, (int, float)) else None
    pinned = payload.get("pinned") is True
    deleted = event.kind == DELETE
    return Entry(scope, key, payload.get("value"), version, pinned, event.ts, expires, event.seq, deleted=deleted)


def _expiry(ts: int, ttl: float) -> int:
    if not math.isfinite(ttl) or ttl < 0:
        raise ValueError(f"ttl {ttl!r} is not a number of seconds")
    if ts + ttl * 1_000_000 > _LATEST_US:
        raise ValueError(f"ttl {ttl!r} would expire after the year 9999")
    return ts + int(ttl * 1_000_000)


def _too_busy(scope: str, key: str) -> Busy:
    return Busy(
        f"{scope} {key!r} was changed by other writers {WRITE_TRIES} times while this write tried",
        "retry the write",
    )


class Memory(Component):
    def __init__(self, core: Core) -> None:
        self.store = core.store
        self.append = core.append
        self.handed_over = core.handed_over
        self._now_us = core.now_us
        self._entries: dict[tuple[str, str], Entry] = {}
        self._lock = asyncio.Lock()
        self.changes = 0  # memory events applied: what was derived from the table is stale when it moved

    def projection(self) -> Projection:
        return Projection("memory", (SET, DELETE), self.apply, SESSION)

    def apply(self, event: Event) -> None:
        """Apply one event, committed or replayed at start-up (daemon/server/projections.py)."""
        entry = entry_of(event)
        if entry is not None:
            self.changes += 1
            self._entries[(entry.scope, entry.key)] = entry

    def get(self, scope: str, key: str) -> Entry:
        entry = self._entries.get((check_scope(scope), check_key(key)))
        if entry is None or not entry.live(self._now_us()):
            state = "expired" if entry is not None and not entry.deleted else "not set"
            raise NotFound(f"{scope} {key!r} is {state}", f"list the keys with `toka memory list {scope}`")
        return entry

    def entries(self, scope: str | None = None, prefix: str = "", pinned: bool | None = None) -> list[Entry]:
        now = self._now_us()
        return sorted(
            (
                e
                for e in self._entries.values()
                if e.live(now)
                and (scope is None or e.scope == scope)
                and e.key.startswith(prefix)
                and (pinned is None or e.pinned == pinned)
            ),
            key=lambda e: (e.scope, e.key),
        )

    def _check_expected(self, scope: str, key: str, expect: int | None) -> int:
        """The key's stored version (0: never set); Conflict unless ``expect`` (when given) is its
        live version, 0 for a key that is not set (never, deleted or expired)."""
        entry = self._entries.get((scope, key))
        live = entry is not None and entry.live(self._now_us())
        seen = entry.version if live and entry is not None else 0
        if expect is not None and expect != seen:
            state = "" if live else " (not set)"
            raise Conflict(
                f"{scope} {key!r} is at version {seen}{state}, not {expect}",
                "read it again (`toka memory get`) and retry with its version",
            )
        return 0 if entry is None else entry.version

    async def set(
        self,
        scope: str,
        key: str,
        value: Any,
        expect: int | None = None,
        ttl: float | None = None,
        pinned: bool | None = None,
    ) -> Entry:
        """Set a value; ``pinned`` None keeps the key's pin as it is (unpinned when new)."""
        scope, key = check_scope(scope), check_key(key)
        size = _size(value)
        if size > MAX_VALUE_BYTES:
            raise UsageError(
                f"the value is {size:,} bytes, more than {MAX_VALUE_BYTES:,}", "store large data as a file"
            )
        ttl = check_ttl(ttl)
        async with self._lock:
            for _ in range(WRITE_TRIES):
                current = self._check_expected(scope, key, expect)
                keep_pin = pinned
                if keep_pin is None:
                    previous = self._entries.get((scope, key))
                    keep_pin = previous is not None and previous.live(self._now_us()) and previous.pinned
                version = current + 1
                payload = {
                    "scope": scope,
                    "key": key,
                    "value": value,
                    "version": version,
                    "ttl": ttl,
                    "pinned": keep_pin,
                }
                written = await self._write(SET, payload)
                if written is not None:
                    return written
        raise _too_busy(scope, key)

    async def delete(self, scope: str, key: str, expect: int | None = None) -> Entry:
        scope, key = check_scope(scope), check_key(key)
        async with self._lock:
            for _ in range(WRITE_TRIES):
                self.get(scope, key)  # NotFound when there is nothing to delete
                current = self._check_expected(scope, key, expect)
                written = await self._write(DELETE, {"scope": scope, "key": key, "version": current + 1})
                if written is not None:
                    return written
        raise _too_busy(scope, key)

    async def _write(self, kind: str, payload: dict[str, Any]) -> Entry | None:
        """Append one change and wait until this table holds it: the entry written, or None when
        another writer's change holds its version (that change is in the table by then)."""
        new = NewEvent(SESSION, kind, payload, key=version_key(payload["scope"], payload["key"], payload["version"]))
        [result] = await self.append([new])
        seen = await self.handed_over(result.event.seq)
        if not result.created:
            if not seen:
                raise Busy(
                    f"version {payload['version']} of {payload['scope']} {payload['key']!r} was written by another"
                    " daemon, whose change this daemon has not read yet",
                    "retry in a moment",
                )
            return None
        entry = entry_of(result.event)
        assert entry is not None  # made from a payload of our own
        return entry

    async def history(self, scope: str, key: str, limit: int = 100) -> list[dict[str, Any]]:
        scope, key = check_scope(scope), check_key(key)
        changes = [
            {"seq": event.seq, "id": event.id, "ts": format_ts(event.ts), "kind": event.kind, **event.payload}
            async for event in self.store.scan(EventQuery(session=SESSION, kinds=(SET, DELETE)))
            if event.payload.get("scope") == scope and event.payload.get("key") == key
        ]
        return changes[-limit:]
