"""The ``deps.*`` operations (docs/state.md): add and remove dependency edges, list them, and
the order work can run in. They answer from the graph the daemon keeps as ``ctx.daemon.deps``
(daemon/deps/graph.py)."""

from __future__ import annotations

from typing import Any

from daemon.deps.graph import Dependencies
from daemon.server.ops import Context, _arg, _required, op
from store.errors import UsageError


def _deps(ctx: Context) -> Dependencies:
    deps: Dependencies = ctx.daemon.deps
    return deps


def _needs(args: dict[str, Any]) -> list[Any]:
    """``needs``: one name or a list of them."""
    needs = _arg(args, "needs", (str, list))
    if needs is None:
        raise UsageError("argument 'needs' is required")
    return [needs] if isinstance(needs, str) else needs


def _edges(deps: Dependencies) -> list[dict[str, str]]:
    return [{"node": node, "needs": need} for node, need in deps.graph.edges()]


@op("deps.add")
async def deps_add(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    node = _required(args, "node", str)
    added = await _deps(ctx).add(node, _needs(args))
    return {"node": node, "added": added, "edges": _edges(_deps(ctx))}


@op("deps.remove")
async def deps_remove(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    node = _required(args, "node", str)
    removed = await _deps(ctx).remove(node, _needs(args))
    return {"node": node, "removed": removed, "edges": _edges(_deps(ctx))}


@op("deps.list")
async def deps_list(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    return {"edges": _edges(_deps(ctx))}


@op("deps.order")
async def deps_order(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    waves = _deps(ctx).graph.waves()
    return {"waves": waves, "nodes": sum(len(wave) for wave in waves)}
