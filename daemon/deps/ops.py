"""The ``deps.*`` operations (docs/state.md): add and remove dependency edges, list them, and
the order work can run in. They answer from the dependency graph (daemon/deps/graph.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from daemon.deps.graph import Dependencies
from daemon.rpc.registry import Call, Ops
from daemon.rpc.requests import NoArgs

OPS = Ops(Dependencies)


@dataclass(frozen=True, slots=True)
class Edges:
    node: str
    needs: str | list[Any]  # one name or a list of them

    def needed(self) -> list[Any]:
        return [self.needs] if isinstance(self.needs, str) else self.needs


def _edges(deps: Dependencies) -> list[dict[str, str]]:
    return [{"node": node, "needs": need} for node, need in deps.graph.edges()]


@OPS.op("deps.add", Edges)
async def deps_add(deps: Dependencies, request: Edges, call: Call) -> dict[str, Any]:
    added = await deps.add(request.node, request.needed())
    return {"node": request.node, "added": added, "edges": _edges(deps)}


@OPS.op("deps.remove", Edges)
async def deps_remove(deps: Dependencies, request: Edges, call: Call) -> dict[str, Any]:
    removed = await deps.remove(request.node, request.needed())
    return {"node": request.node, "removed": removed, "edges": _edges(deps)}


@OPS.op("deps.list", NoArgs)
async def deps_list(deps: Dependencies, request: NoArgs, call: Call) -> dict[str, Any]:
    return {"edges": _edges(deps)}


@OPS.op("deps.order", NoArgs)
async def deps_order(deps: Dependencies, request: NoArgs, call: Call) -> dict[str, Any]:
    waves = deps.graph.waves()
    return {"waves": waves, "nodes": sum(len(wave) for wave in waves)}
