"""The ``state.*`` operations (docs/state.md): read and change the state of an entity in a state
machine, its history, the machines, and registering a machine. They answer from the state table
(daemon/states/machines.py) that the daemon keeps as ``ctx.daemon.states``."""

from __future__ import annotations

from typing import Any

from daemon.server.ops import Context, _arg, _required, op
from daemon.states.service import StateStore


def _states(ctx: Context) -> StateStore:
    states: StateStore = ctx.daemon.states
    return states


@op("state.get")
async def state_get(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    entry = _states(ctx).get(_required(args, "machine", str), _required(args, "entity", str))
    return entry.to_json()


@op("state.set")
async def state_set(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    machine, entity, to = (_required(args, name, str) for name in ("machine", "entity", "to"))
    entry, changed = await _states(ctx).set(machine, entity, to, _arg(args, "reason", str))
    # No await since the change: the entry is as this request left it.
    previous = entry.changes[-1].from_ if changed else entry.state
    return entry.to_json() | {"from": previous, "changed": changed}


@op("state.history")
async def state_history(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    entry = _states(ctx).get(_required(args, "machine", str), _required(args, "entity", str))
    return entry.to_json() | {"changes": [change.to_json() for change in entry.changes]}


@op("state.list")
async def state_list(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    return {"entities": [entry.to_json() for entry in _states(ctx).listing(_arg(args, "machine", str))]}


@op("state.machines")
async def state_machines(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    machines = _states(ctx).table.machines
    return {"machines": [machines[name].to_json() for name in sorted(machines)]}


@op("state.register")
async def state_register(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    definition = {
        "name": _required(args, "name", str),
        "states": _required(args, "states", list),
        "initial": _required(args, "initial", str),
        "transitions": _arg(args, "transitions", dict, {}),
        "progress": _arg(args, "progress", dict, {}),
    }
    machine, changed = await _states(ctx).register(definition)
    return machine.to_json() | {"changed": changed}
