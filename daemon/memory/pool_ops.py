"""The ``pool.*`` operations (docs/pool.md): put, get, delete, list, stats and health of the
memory pool. They read the pool as ``ctx.daemon.pool``, a :class:`daemon.memory.pool.PoolService`.

Values travel as text when they are UTF-8 (``value``) and as base64 otherwise (``value_b64``),
so any bytes round-trip through the JSON protocol.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from daemon.memory.pool import Item, check_key, check_ttl
from daemon.memory.pool_service import PoolService
from daemon.server.ops import Context, _arg, op
from store.errors import UsageError
from store.events import format_ts

DEFAULT_LIST = 100
MAX_LIST = 10_000


def _service(ctx: Context) -> PoolService:
    return ctx.daemon.pool


def _key(args: dict[str, Any]) -> str:
    if "key" not in args:
        raise UsageError("argument 'key' is required")
    return check_key(args["key"])


def _value(args: dict[str, Any]) -> bytes:
    text, encoded = args.get("value"), args.get("value_b64")
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


@op("pool.put")
async def pool_put(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    key = _key(args)
    value = _value(args)
    service = _service(ctx)
    result = await service.put(key, value, check_ttl(args.get("ttl")))
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


@op("pool.get")
async def pool_get(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    item = await _service(ctx).get(_key(args))
    return {
        "key": item.key,
        **value_json(item.value),
        "size": item.size,
        "ttl_left": item.ttl_left,
        "created_ts": format_ts(item.created_us),
        "hits": item.hits,
    }


@op("pool.delete")
async def pool_delete(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    return {"deleted": await _service(ctx).delete(_key(args))}


@op("pool.list")
async def pool_list(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    prefix = _arg(args, "prefix", str, "")
    limit = _arg(args, "limit", int, DEFAULT_LIST)
    if limit < 1:
        raise UsageError("argument 'limit' must be at least 1")
    items = _service(ctx).pool.items(prefix)
    shown = items[: min(limit, MAX_LIST)]
    return {"entries": [item_json(i) for i in shown], "total": len(items), "more": len(items) > len(shown)}


@op("pool.stats")
async def pool_stats(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    return _service(ctx).stats()


@op("pool.health")
async def pool_health(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    return _service(ctx).health()
