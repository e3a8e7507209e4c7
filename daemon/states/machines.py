"""Declared state machines and the current state of every entity in each, as a projection of the log.

A machine names its states, its initial state, the transitions it allows and, optionally, a
progress percentage per state. Two are built in (``agent``: an agent's execution states;
``session``: the phases of a session's work, with progress), more come from ``config.toml``
(``[state.machines.NAME]``, read by :func:`machines_from_config`) or are registered over the
protocol as ``state.machine`` events. An entity is any string (an agent id, a session name, a
workstream); until its first change it is in its machine's initial state.

Every change is a ``state.set`` event ``{machine, entity, from, to, reason, progress}`` in the
fixed session ``toka.state`` (one chain for every machine, so ``toka verify`` covers them all and
one query replays them). :class:`StateTable` applies ``state.machine`` and ``state.set`` events
of that session in log order, so replaying the log rebuilds the same table; events that name an
unknown machine or state (appended by hand, say) are passed over. :class:`StateStore` is the
daemon's service: it validates a request under a lock and appends the event through the group
committer; the table changes when the event commits.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daemon.config import read_toml
from store.base import AppendResult, EventQuery, EventStore
from store.errors import ConfigError, Conflict, NotFound, UsageError
from store.events import Event, NewEvent, fit_name, format_ts, parse_new_event

Append = Callable[[Sequence[NewEvent]], Awaitable[list[AppendResult]]]

SESSION = "toka.state"
SET = "state.set"
MACHINE = "state.machine"
KINDS = (SET, MACHINE)
# Machine names are written on the command line and in TOML keys: keep them plain.
_MACHINE_NAME = re.compile(r"^[a-z][a-z0-9_.-]{0,63}$")
_STATE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
# Bounds that no sensible machine reaches, so one registration cannot bloat every answer.
MAX_STATES = 100
# Entity ids are event payload values, not names the store checks; the same bound as a session.
MAX_ENTITY_CHARS = 200


@dataclass(frozen=True)
class Machine:
    """A state machine: states in their declared order, where it starts, where each state may go."""

    name: str
    states: tuple[str, ...]
    initial: str
    transitions: Mapping[str, tuple[str, ...]]
    progress: Mapping[str, float] = field(default_factory=dict)
    source: str = "registered"  # "builtin", "config" or "registered"

    def allowed(self, state: str) -> tuple[str, ...]:
        return self.transitions.get(state, ())

    @property
    def final(self) -> tuple[str, ...]:
        return tuple(s for s in self.states if not self.allowed(s))

    def state_named(self, name: str) -> str:
        """``name`` as one of the machine's states; a unique case-insensitive match is taken too."""
        if name in self.states:
            return name
        folded = [s for s in self.states if s.lower() == name.lower()]
        if len(folded) == 1:
            return folded[0]
        raise UsageError(f"machine {self.name} has no state {name!r}", f"states: {', '.join(self.states)}")

    def definition(self) -> dict[str, Any]:
        """The registration payload: what makes two machines the same."""
        return {
            "name": self.name,
            "states": list(self.states),
            "initial": self.initial,
            "transitions": {s: list(self.transitions[s]) for s in self.states if s in self.transitions},
            "progress": {s: self.progress[s] for s in self.states if s in self.progress},
        }

    def to_json(self) -> dict[str, Any]:
        return self.definition() | {"final": list(self.final), "source": self.source}


def make_machine(data: Any, source: str = "registered", name: str | None = None) -> Machine:
    """Validate a definition ({name, states, initial, transitions, progress?}); UsageError if bad."""
    if not isinstance(data, Mapping):
        raise UsageError(f"a machine definition must be a table, not {type(data).__name__}")
    name = name if name is not None else data.get("name")
    if not isinstance(name, str) or not _MACHINE_NAME.match(name):
        raise UsageError(
            f"machine name {name!r} is not valid", "lowercase letters, digits, _ . and -, starting with a letter"
        )
    where = f"machine {name}"
    states = data.get("states")
    if not isinstance(states, (list, tuple)) or not states or not all(isinstance(s, str) for s in states):
        raise UsageError(f"{where}: states must be a non-empty list of names")
    if len(states) > MAX_STATES:
        raise UsageError(f"{where}: at most {MAX_STATES} states, got {len(states)}")
    for state in states:
        if not _STATE_NAME.match(state):
            raise UsageError(
                f"{where}: state {state!r} is not a valid name", "letters, digits, _ . and -, starting with a letter"
            )
    if len(set(states)) != len(states):
        twice = sorted({s for s in states if states.count(s) > 1})
        raise UsageError(f"{where}: states listed twice: {', '.join(twice)}")
    known = set(states)
    initial = data.get("initial")
    if not isinstance(initial, str) or initial not in known:
        raise UsageError(f"{where}: initial state {initial!r} is not one of its states", f"states: {', '.join(states)}")
    given = data.get("transitions", {})
    if not isinstance(given, Mapping):
        raise UsageError(f"{where}: transitions must be a table of state -> list of states")
    transitions: dict[str, tuple[str, ...]] = {}
    for origin, targets in given.items():
        if origin not in known:
            raise UsageError(f"{where}: transition from unknown state {origin!r}", f"states: {', '.join(states)}")
        if not isinstance(targets, (list, tuple)) or not all(isinstance(t, str) for t in targets):
            raise UsageError(f"{where}: transitions from {origin} must be a list of states")
        for target in targets:
            if target not in known:
                raise UsageError(
                    f"{where}: transition {origin} -> {target!r} names an unknown state", f"states: {', '.join(states)}"
                )
            if target == origin:
                raise UsageError(f"{where}: {origin} cannot lead to itself", "setting a state it is in changes nothing")
        if targets:
            transitions[origin] = tuple(dict.fromkeys(targets))
    progress_given = data.get("progress") or {}
    if not isinstance(progress_given, Mapping):
        raise UsageError(f"{where}: progress must be a table of state -> percentage")
    progress: dict[str, float] = {}
    for state, pct in progress_given.items():
        if state not in known:
            raise UsageError(f"{where}: progress for unknown state {state!r}", f"states: {', '.join(states)}")
        if isinstance(pct, bool) or not isinstance(pct, (int, float)) or not 0 <= pct <= 100:
            raise UsageError(f"{where}: progress of {state} must be a percentage from 0 to 100, got {pct!r}")
        progress[state] = pct
    return Machine(name, tuple(states), initial, transitions, progress, source)


# The execution states of an agent (docs/state.md). COMPLETED and FAILED may still be cleaned up
# to TERMINATED; TERMINATED is final.
AGENT = make_machine(
    {
        "states": [
            "INITIALIZING",
            "READY",
            "EXECUTING_TASK",
            "WAITING",
            "PAUSED",
            "COMPLETED",
            "FAILED",
            "TERMINATED",
        ],
        "initial": "INITIALIZING",
        "transitions": {
            "INITIALIZING": ["READY", "FAILED", "TERMINATED"],
            "READY": ["EXECUTING_TASK", "PAUSED", "COMPLETED", "FAILED", "TERMINATED"],
            "EXECUTING_TASK": ["READY", "WAITING", "PAUSED", "COMPLETED", "FAILED", "TERMINATED"],
            "WAITING": ["EXECUTING_TASK", "READY", "PAUSED", "FAILED", "TERMINATED"],
            "PAUSED": ["READY", "EXECUTING_TASK", "WAITING", "FAILED", "TERMINATED"],
            "COMPLETED": ["TERMINATED"],
            "FAILED": ["TERMINATED"],
        },
    },
    source="builtin",
    name="agent",
)
_PHASES = {
    "initializing": 0,
    "critical_infrastructure": 10,
    "foundation_services": 25,
    "parallel_development": 50,
    "monitoring": 80,
    "completion": 95,
    "completed": 100,
}
_STEPS = list(_PHASES)
# The phases of a session's work, one after the other; any phase that is not final may fail.
# ``failed`` has no percentage of its own: an entity keeps the progress it had reached.
SESSION_PHASES = make_machine(
    {
        "states": [*_STEPS, "failed"],
        "initial": "initializing",
        "transitions": {phase: [after, "failed"] for phase, after in zip(_STEPS, _STEPS[1:], strict=False)},
        "progress": _PHASES,
    },
    source="builtin",
    name="session",
)
BUILTIN: dict[str, Machine] = {AGENT.name: AGENT, SESSION_PHASES.name: SESSION_PHASES}


def machines_from_config(table: Mapping[str, Any] | None) -> dict[str, Machine]:
    """The machines of a parsed ``[state]`` table (``{"machines": {NAME: {...}}}``); ConfigError
    naming the machine when one is malformed or takes a built-in name."""
    if not table:
        return {}
    unknown = sorted(set(table) - {"machines"})
    if unknown:
        raise ConfigError(f"state: unknown key {', '.join(unknown)}", "the [state] table holds [state.machines.NAME]")
    machines = table.get("machines") or {}
    if not isinstance(machines, Mapping):
        raise ConfigError("state.machines must be a table of machines", "write [state.machines.NAME] tables")
    found: dict[str, Machine] = {}
    for name, definition in machines.items():
        if name in BUILTIN:
            raise ConfigError(f"state.machines.{name}: {name} is built in", "give the machine another name")
        if isinstance(definition, Mapping):
            extra = sorted(set(definition) - {"states", "initial", "transitions", "progress"})
            if extra:
                raise ConfigError(
                    f"state.machines.{name}: unknown key {', '.join(extra)}",
                    "keys: states, initial, transitions, progress",
                )
        try:
            found[name] = make_machine(definition, source="config", name=name)
        except UsageError as exc:
            raise ConfigError(f"config.toml: {exc.message}", exc.hint) from None
    return found


def read_machines(config_file: Path) -> dict[str, Machine]:
    """The machines declared in ``config_file``'s ``[state]`` table; none when the file is missing."""
    table = read_toml(config_file).get("state")
    if table is not None and not isinstance(table, dict):
        raise ConfigError("state in config.toml must be a table", "write [state.machines.NAME] tables")
    return machines_from_config(table)


@dataclass(frozen=True)
class Change:
    seq: int
    ts: int
    from_: str
    to: str
    reason: str | None
    progress: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "ts": format_ts(self.ts),
            "from": self.from_,
            "to": self.to,
            "reason": self.reason,
            "progress": self.progress,
        }


@dataclass
class Entry:
    """One entity in one machine: its current state and every change that led there."""

    machine: str
    entity: str
    state: str
    progress: float | None
    changes: list[Change] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        last = self.changes[-1] if self.changes else None
        return {
            "machine": self.machine,
            "entity": self.entity,
            "state": self.state,
            "progress": self.progress,
            "since": None if last is None else format_ts(last.ts),
            "history_len": len(self.changes),
        }


class StateTable:
    """Machines and the current state of every entity, kept up to date by :meth:`apply` in log order."""

    def __init__(self, declared: Mapping[str, Machine] | None = None) -> None:
        self.fixed: dict[str, Machine] = {**BUILTIN, **(declared or {})}  # not changed by the log
        self.machines: dict[str, Machine] = dict(self.fixed)
        self.entries: dict[tuple[str, str], Entry] = {}

    def machine(self, name: str) -> Machine:
        found = self.machines.get(name)
        if found is None:
            raise NotFound(f"no state machine {name!r}", f"machines: {', '.join(sorted(self.machines))}")
        return found

    def entry(self, machine: Machine, entity: str) -> Entry:
        """The entity's entry; one in the initial state (not stored) when it has never changed."""
        found = self.entries.get((machine.name, entity))
        if found is None:
            return Entry(machine.name, entity, machine.initial, machine.progress.get(machine.initial))
        return found

    def apply(self, event: Event) -> None:
        if event.session != SESSION:
            return
        payload = event.payload
        if event.kind == MACHINE:
            name = payload.get("name")
            if isinstance(name, str) and name not in self.fixed:
                try:
                    self.machines[name] = make_machine(payload)
                except UsageError:
                    return
        elif event.kind == SET:
            machine = self.machines.get(str(payload.get("machine")))
            entity, to = payload.get("entity"), payload.get("to")
            if machine is None or not isinstance(entity, str) or to not in machine.states:
                return
            reason = payload.get("reason")
            entry = self.entries.get((machine.name, entity)) or self.entry(machine, entity)
            self.entries[(machine.name, entity)] = entry
            progress = machine.progress.get(to, entry.progress)
            entry.changes.append(
                Change(event.seq, event.ts, entry.state, to, reason if isinstance(reason, str) else None, progress)
            )
            entry.state, entry.progress = to, progress

    def snapshot(self) -> dict[str, Any]:
        """Everything the table holds, as JSON: for comparing two replays."""
        entries = {
            f"{m}/{e}": entry.to_json() | {"changes": [c.to_json() for c in entry.changes]}
            for (m, e), entry in sorted(self.entries.items())
        }
        return {"machines": {n: m.to_json() for n, m in sorted(self.machines.items())}, "entries": entries}


def entity_name(value: Any) -> str:
    entity = fit_name(value, MAX_ENTITY_CHARS)
    if entity is None:
        raise UsageError(
            "an entity must be a non-empty string without control characters",
            f"at most {MAX_ENTITY_CHARS} characters, e.g. an agent id or a session name",
        )
    return entity


class StateStore:
    """The daemon's state machines: the table, rebuilt at start-up and changed by requests."""

    def __init__(
        self, store: EventStore, append: Append, machines_from_config: Mapping[str, Machine] | None = None
    ) -> None:
        self.store = store
        self.append = append
        self.table = StateTable(machines_from_config)
        self._lock = asyncio.Lock()

    async def load(self) -> None:
        """Rebuild the table from the log's registrations and changes."""
        async for event in self.store.scan(EventQuery(session=SESSION, kinds=KINDS)):
            self.table.apply(event)

    def committed(self, events: list[Event]) -> None:
        for event in events:
            if event.kind in KINDS:
                self.table.apply(event)

    # Requests ------------------------------------------------------------------------------

    def get(self, machine: str, entity: str) -> Entry:
        return self.table.entry(self.table.machine(machine), entity_name(entity))

    async def set(self, machine_name: str, entity: str, to: str, reason: str | None = None) -> tuple[Entry, bool]:
        """Move ``entity`` to state ``to``; the entry and whether it changed (setting the state it is
        already in stores nothing). Conflict, naming the allowed states, when the machine forbids it."""
        entity = entity_name(entity)
        if reason is not None and not isinstance(reason, str):
            raise UsageError("a reason must be a string")
        async with self._lock:
            machine = self.table.machine(machine_name)
            target = machine.state_named(to)
            entry = self.table.entry(machine, entity)
            if target == entry.state:
                return entry, False
            allowed = machine.allowed(entry.state)
            if target not in allowed:
                hint = f"from {entry.state}: {', '.join(allowed)}" if allowed else f"{entry.state} is final"
                raise Conflict(f"{machine.name} {entity} is {entry.state} and cannot go to {target}", hint)
            progress = machine.progress.get(target, entry.progress)
            payload = {
                "machine": machine.name,
                "entity": entity,
                "from": entry.state,
                "to": target,
                "reason": reason,
                "progress": progress,
            }
            await self.append([parse_new_event({"session": SESSION, "kind": SET, "payload": payload})])
            return self.table.entry(machine, entity), True

    async def register(self, data: Mapping[str, Any]) -> tuple[Machine, bool]:
        """Register (or redefine) a machine; whether anything changed. A built-in or configured
        name is refused, and so is a redefinition that drops a state some entity is in."""
        machine = make_machine(data)
        async with self._lock:
            if machine.name in self.table.fixed:
                where = "built in" if machine.name in BUILTIN else "declared in config.toml"
                raise Conflict(f"machine {machine.name} is {where}", "register it under another name")
            old = self.table.machines.get(machine.name)
            if old is not None and old.definition() == machine.definition():
                return old, False
            stranded = sorted(
                {e.state for (m, _), e in self.table.entries.items() if m == machine.name} - set(machine.states)
            )
            if stranded:
                raise Conflict(
                    f"machine {machine.name}: entities are in {', '.join(stranded)}, which the new definition drops",
                    "keep those states, or move the entities out of them first",
                )
            event = {"session": SESSION, "kind": MACHINE, "payload": machine.definition()}
            await self.append([parse_new_event(event)])
            return self.table.machine(machine.name), True

    def listing(self, machine: str | None = None) -> list[Entry]:
        """Every entity that has changed state, by machine then entity."""
        if machine is not None:
            self.table.machine(machine)
        return [e for (m, _), e in sorted(self.table.entries.items()) if machine is None or m == machine]
