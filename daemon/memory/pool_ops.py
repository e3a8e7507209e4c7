"""The ``pool.*`` operations (docs/pool.md): put, get, delete, list, stats and health of the
memory pool (daemon/memory/pool.py's :class:`~daemon.memory.pool_service.PoolService`).

Values travel as text when they are UTF-8 (``value``) and as base64 otherwise (``value_b64``),
so any bytes round-trip through the JSON protocol.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from daemon.memory.pool import Item, check_key, check_ttl
from daemon.memory.pool_service import PoolService
from daemon.rpc.registry import Call, Ops
from daemon.rpc.requests import NoArgs
from store.errors import UsageError
from store.events import format_ts

OPS = Ops(PoolService)

DEFAULT_LIST = 100
MAX_LIST = 10_000


@dataclass(frozen=True, slots=True)
class Key:
    key: Any  # checked by the pool's check_key, as every key is


@dataclass(frozen=True, slots=True)
class Put:
    key: Any
    value: Any = None
    value_b64: Any = None
    ttl: Any = None  # checked by check_ttl


def _value(request: Put) -> bytes:
    text, encoded = request.value, request.value_b64
    if (text is None) == (encoded is None):
        raise UsageError("pool.put needs one of 'value' (a string) or 'value_b64' (base64 bytes)")
    if text is not None:
        if not isinstance(text, str):
            raise UsageError(f"argument 'value' must be str, got {type(text).__name__}", "send bytes as value_b64")
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate escaped in the JSON
            raise UsageError("argument 'value' is not valid Unicode text", "send the bytes as value_b64") from None
    if not isinstance(encoded, str):
        raise UsageError(f"argument 'value_b64' must be a base64 string, got {type(encoded).__name__}")
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise UsageError("argument 'value_b64' is not valid base64") from None


def value_json(value: bytes) -> dict[str, str]:
    """``{"value": text}`` when the bytes are UTF-8, else ``{"value_b64": ...}``."""
    try:
        return {"value": value.decode("utf-8")}
    except UnicodeDecodeError:
        return {"value_b64": base64.b64encode(value).decode("ascii")}


def item_json(item: Item) -> dict[str, Any]:
    """An entry without its value, as pool.list shows it."""
    return {"key": item.key, "size": item.size, "age": item.age_s, "ttl_left": item.ttl_left, "hits": item.hits}


@OPS.op("pool.put", Put)
async def pool_put(service: PoolService, request: Put, call: Call) -> dict[str, Any]:
    key = check_key(request.key)
    value = _value(request)
    result = await service.put(key, value, check_ttl(request.ttl))
    pool = service.pool
    return {
        "key": result.key,
        "size": result.size,
        "stored": result.stored,
        "replaced": result.replaced,
        "evicted": result.evicted,
        "used_bytes": pool.used_bytes,
        "capacity_bytes": pool.capacity_bytes,
        "level": pool.level,
    }


@OPS.op("pool.get", Key)
async def pool_get(service: PoolService, request: Key, call: Call) -> dict[str, Any]:
    item = await service.get(check_key(request.key))
    return {
        "key": item.key,
        **value_json(item.value),
        "size": item.size,
        "ttl_left": item.ttl_left,
        "created_ts": format_ts(item.created_us),
        "hits": item.hits,
    }


@OPS.op("pool.delete", Key)
async def pool_delete(service: PoolService, request: Key, call: Call) -> dict[str, Any]:
    return {"deleted": await service.delete(check_key(request.key))}


@dataclass(frozen=True, slots=True)
class ListEntries:
    prefix: str = ""
    limit: int = DEFAULT_LIST


@OPS.op("pool.list", ListEntries)
async def pool_list(service: PoolService, request: ListEntries, call: Call) -> dict[str, Any]:
    if request.limit < 1:
        raise UsageError("argument 'limit' must be at least 1")
    items = service.pool.items(request.prefix)
    shown = items[: min(request.limit, MAX_LIST)]
    return {"entries": [item_json(i) for i in shown], "total": len(items), "more": len(items) > len(shown)}


@OPS.op("pool.stats", NoArgs)
async def pool_stats(service: PoolService, request: NoArgs, call: Call) -> dict[str, Any]:
    return service.stats()


@OPS.op("pool.health", NoArgs)
async def pool_health(service: PoolService, request: NoArgs, call: Call) -> dict[str, Any]:
    return service.health()
