"""The ``memory.*`` operations (docs/protocol.md): the memory's set, get, list, delete
and history."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from daemon.contract.results import MemoryEntry, MemoryList
from daemon.memory.service import Memory, check_scope
from daemon.rpc.registry import Call, Ops

OPS = Ops(Memory)


@dataclass(frozen=True, slots=True)
class Set:
    scope: str
    key: str
    value: Any  # any JSON value, null too
    expect_version: int | None = None
    ttl: float | None = None
    pinned: bool | None = None


@OPS.op("memory.set", Set)
async def memory_set(memory: Memory, request: Set, call: Call) -> MemoryEntry:
    entry = await memory.set(
        request.scope,
        request.key,
        request.value,
        expect=request.expect_version,
        ttl=request.ttl,
        pinned=request.pinned,
    )
    return entry.to_json()


@dataclass(frozen=True, slots=True)
class Key:
    scope: str
    key: str


@dataclass(frozen=True, slots=True)
class Delete:
    scope: str
    key: str
    expect_version: int | None = None


@OPS.op("memory.get", Key)
async def memory_get(memory: Memory, request: Key, call: Call) -> MemoryEntry:
    return memory.get(request.scope, request.key).to_json()


@dataclass(frozen=True, slots=True)
class ListEntries:
    scope: str | None = None
    prefix: str = ""
    pinned: bool | None = None


@OPS.op("memory.list", ListEntries)
async def memory_list(memory: Memory, request: ListEntries, call: Call) -> MemoryList:
    scope = None if request.scope is None else check_scope(request.scope)
    return {"entries": [e.to_json() for e in memory.entries(scope, request.prefix, request.pinned)]}


@OPS.op("memory.delete", Delete)
async def memory_delete(memory: Memory, request: Delete, call: Call) -> dict[str, Any]:
    entry = await memory.delete(request.scope, request.key, expect=request.expect_version)
    return {"scope": entry.scope, "key": entry.key, "version": entry.version, "deleted": True}


@OPS.op("memory.history", Key)
async def memory_history(memory: Memory, request: Key, call: Call) -> dict[str, Any]:
    return {"scope": request.scope, "key": request.key, "changes": await memory.history(request.scope, request.key)}
