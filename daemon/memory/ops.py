"""The ``memory.*`` operations (docs/protocol.md): the context store's set, get, list, delete
and history."""

from __future__ import annotations

from typing import Any

from daemon.memory.context_store import check_scope
from daemon.server.ops import Context, _arg, _required, op
from store.errors import UsageError


@op("memory.set")
async def memory_set(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    if "value" not in args:
        raise UsageError("argument 'value' is required (any JSON value; null too)")
    entry = await ctx.daemon.memory.set(
        _required(args, "scope", str),
        _required(args, "key", str),
        args["value"],
        expect=_arg(args, "expect_version", int),
        ttl=_arg(args, "ttl", (int, float)),
        pinned=_arg(args, "pinned", bool),
    )
    return entry.to_json()


@op("memory.get")
async def memory_get(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    return ctx.daemon.memory.get(_required(args, "scope", str), _required(args, "key", str)).to_json()


@op("memory.list")
async def memory_list(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    scope = _arg(args, "scope", str)
    entries = ctx.daemon.memory.entries(
        None if scope is None else check_scope(scope), _arg(args, "prefix", str, ""), _arg(args, "pinned", bool)
    )
    return {"entries": [e.to_json() for e in entries]}


@op("memory.delete")
async def memory_delete(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    entry = await ctx.daemon.memory.delete(
        _required(args, "scope", str), _required(args, "key", str), expect=_arg(args, "expect_version", int)
    )
    return {"scope": entry.scope, "key": entry.key, "version": entry.version, "deleted": True}


@op("memory.history")
async def memory_history(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    scope, key = _required(args, "scope", str), _required(args, "key", str)
    return {"scope": scope, "key": key, "changes": await ctx.daemon.memory.history(scope, key)}
