"""The context store: durable, scoped key-value memory, as a projection of ``memory.*`` events.

Scopes are ``global``, ``agent:<id>``, ``session:<name>`` and ``trace:<id>``. A value is any JSON
(at most ``MAX_VALUE_BYTES`` as canonical JSON); each key has a version, 1 for its first value
and one more for each change, deletions included. ``set`` and ``delete`` may name the version
they expect (compare-and-set): when the key is at another version the write is refused with
``Conflict`` and nothing is stored. An entry may expire (``ttl`` seconds after it was set: an
expired entry reads as absent, and its key's next version starts where it stopped) and may be
pinned (``toka context`` puts pinned entries in first).

Every change is an event in session ``toka.memory``: ``memory.set`` {scope, key, value, version,
ttl, pinned} and ``memory.delete`` {scope, key, version}. The current table is kept by applying
those in log order (``load`` replays them at start-up), so replaying the log gives the same
table; writes are checked and appended under one lock, so concurrent compare-and-set writers
never lose an update.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from store.base import AppendResult, EventQuery, EventStore
from store.errors import Conflict, NotFound, UsageError
from store.events import Event, NewEvent, canonical_json, format_ts, parse_new_event

SESSION = "toka.memory"
SET, DELETE = "memory.set", "memory.delete"
MAX_KEY_CHARS = 256
MAX_VALUE_BYTES = 1024 * 1024
_SCOPE = re.compile(r"^(global|(agent|session|trace):[^\x00-\x1f]{1,256})$")

Append = Callable[[Sequence[NewEvent]], Awaitable[list[AppendResult]]]


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

    def to_json(self) -> dict[str, Any]:
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


def check_key(key: Any) -> str:
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS or any(ord(c) < 32 for c in key):
        raise UsageError(f"a key is 1 to {MAX_KEY_CHARS} printable characters, got {str(key)[:40]!r}")
    return key


def _now_us() -> int:
    return time.time_ns() // 1000


class ContextStore:
    def __init__(self, store: EventStore, append: Append) -> None:
        self.store = store
        self.append = append
        self._entries: dict[tuple[str, str], Entry] = {}
        self._lock = asyncio.Lock()
        self.changes = 0  # memory events applied: what was derived from the table is stale when it moved

    async def load(self) -> None:
        self.committed([event async for event in self.store.scan(EventQuery(session=SESSION, kinds=(SET, DELETE)))])

    def committed(self, events: list[Event]) -> None:
        for event in events:
            if event.session != SESSION or event.kind not in (SET, DELETE):
                continue
            payload = event.payload
            scope, key, version = payload.get("scope"), payload.get("key"), payload.get("version")
            if not isinstance(scope, str) or not isinstance(key, str) or not isinstance(version, int):
                continue
            self.changes += 1
            ttl = payload.get("ttl")
            expires = event.ts + int(ttl * 1_000_000) if isinstance(ttl, (int, float)) else None
            self._entries[(scope, key)] = Entry(
                scope,
                key,
                payload.get("value"),
                version,
                payload.get("pinned") is True,
                event.ts,
                expires,
                event.seq,
                deleted=event.kind == DELETE,
            )

    def get(self, scope: str, key: str) -> Entry:
        entry = self._entries.get((check_scope(scope), check_key(key)))
        if entry is None or not entry.live(_now_us()):
            state = "expired" if entry is not None and not entry.deleted else "not set"
            raise NotFound(f"{scope} {key!r} is {state}", f"list the keys with `toka memory list {scope}`")
        return entry

    def entries(self, scope: str | None = None, prefix: str = "", pinned: bool | None = None) -> list[Entry]:
        now = _now_us()
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
        live = entry is not None and entry.live(_now_us())
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
        size = len(canonical_json(value))
        if size > MAX_VALUE_BYTES:
            raise UsageError(
                f"the value is {size:,} bytes, more than {MAX_VALUE_BYTES:,}", "store large data as a file"
            )
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or ttl < 0):
            raise UsageError(f"ttl must be a number of seconds, 0 or more, got {ttl!r}")
        async with self._lock:
            current = self._check_expected(scope, key, expect)
            if pinned is None:
                previous = self._entries.get((scope, key))
                pinned = previous is not None and previous.live(_now_us()) and previous.pinned
            payload = {"scope": scope, "key": key, "value": value, "version": current + 1, "ttl": ttl, "pinned": pinned}
            await self.append([parse_new_event({"session": SESSION, "kind": SET, "payload": payload})])
            return self._entries[(scope, key)]

    async def delete(self, scope: str, key: str, expect: int | None = None) -> Entry:
        scope, key = check_scope(scope), check_key(key)
        async with self._lock:
            self.get(scope, key)  # NotFound when there is nothing to delete
            current = self._check_expected(scope, key, expect)
            payload = {"scope": scope, "key": key, "version": current + 1}
            await self.append([parse_new_event({"session": SESSION, "kind": DELETE, "payload": payload})])
            return self._entries[(scope, key)]

    async def history(self, scope: str, key: str, limit: int = 100) -> list[dict[str, Any]]:
        scope, key = check_scope(scope), check_key(key)
        changes = [
            {"seq": event.seq, "id": event.id, "ts": format_ts(event.ts), "kind": event.kind, **event.payload}
            async for event in self.store.scan(EventQuery(session=SESSION, kinds=(SET, DELETE)))
            if event.payload.get("scope") == scope and event.payload.get("key") == key
        ]
        return changes[-limit:]
