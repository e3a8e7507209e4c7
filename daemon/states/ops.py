"""The ``state.*`` operations (docs/state.md): read and change the state of an entity in a state
machine, its history, the machines, and registering a machine. They answer from the state table
(daemon/states/service.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from daemon.rpc.registry import Call, Ops
from daemon.rpc.requests import NoArgs
from daemon.states.service import States

OPS = Ops(States)


@dataclass(frozen=True, slots=True)
class Entity:
    machine: str
    entity: str


@OPS.op("state.get", Entity)
async def state_get(states: States, request: Entity, call: Call) -> dict[str, Any]:
    return states.get(request.machine, request.entity).to_json()


@dataclass(frozen=True, slots=True)
class SetState:
    machine: str
    entity: str
    to: str
    reason: str | None = None


@OPS.op("state.set", SetState)
async def state_set(states: States, request: SetState, call: Call) -> dict[str, Any]:
    entry, changed = await states.set(request.machine, request.entity, request.to, request.reason)
    # No await since the change: the entry is as this request left it.
    previous = entry.changes[-1].from_ if changed else entry.state
    return entry.to_json() | {"from": previous, "changed": changed}


@OPS.op("state.history", Entity)
async def state_history(states: States, request: Entity, call: Call) -> dict[str, Any]:
    entry = states.get(request.machine, request.entity)
    return entry.to_json() | {"changes": [change.to_json() for change in entry.changes]}


@dataclass(frozen=True, slots=True)
class ListEntities:
    machine: str | None = None


@OPS.op("state.list", ListEntities)
async def state_list(states: States, request: ListEntities, call: Call) -> dict[str, Any]:
    return {"entities": [entry.to_json() for entry in states.listing(request.machine)]}


@OPS.op("state.machines", NoArgs)
async def state_machines(states: States, request: NoArgs, call: Call) -> dict[str, Any]:
    machines = states.table.machines
    return {"machines": [machines[name].to_json() for name in sorted(machines)]}


@dataclass(frozen=True, slots=True)
class Register:
    name: str
    states: list[Any]
    initial: str
    transitions: dict[str, Any] = field(default_factory=dict)
    progress: dict[str, Any] = field(default_factory=dict)


@OPS.op("state.register", Register)
async def state_register(states: States, request: Register, call: Call) -> dict[str, Any]:
    definition = {
        "name": request.name,
        "states": request.states,
        "initial": request.initial,
        "transitions": request.transitions,
        "progress": request.progress,
    }
    machine, changed = await states.register(definition)
    return machine.to_json() | {"changed": changed}
