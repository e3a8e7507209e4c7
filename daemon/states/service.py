"""The state machines as the daemon runs them.

:class:`States` holds the table (daemon/states/table.py), rebuilds it from the log at
start-up, and turns requests into events: it validates a request under a lock and appends its
event through the group committer; the table changes when the event is handed over to it.

A change names the change it follows: its idempotency key (:func:`change_key`) is the machine
and entity's digest and the seq of the entity's last change, which the store holds to one event,
deciding in the append's own transaction. On a log several daemons share, two changes made from
the same state cannot both commit: the second waits until the first reaches this table and is
checked again against the state it left.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from daemon.component import Component, Projection
from daemon.core import Core
from daemon.states.machines import BUILTIN, Machine, make_machine
from daemon.states.table import KINDS, MACHINE, SESSION, SET, Change, Entry, StateTable
from store.errors import Busy, Conflict, UsageError
from store.events import NewEvent, canonical_json, digest, fit_name, parse_new_event

# Changes a request tries when other daemons keep changing the entity first (each try follows a
# change it had not seen).
WRITE_TRIES = 8

# Entity ids are event payload values, not names the store checks; the same bound as a session.
MAX_ENTITY_CHARS = 200


def entity_name(value: Any) -> str:
    entity = fit_name(value, MAX_ENTITY_CHARS)
    if entity is None:
        raise UsageError(
            "an entity must be a non-empty string without control characters",
            f"at most {MAX_ENTITY_CHARS} characters, e.g. an agent id or a session name",
        )
    return entity


def change_key(machine: str, entity: str, after: int) -> str:
    """The idempotency key of the change of ``entity`` in ``machine`` that follows its change at
    seq ``after`` (0: its first): one event per step, as the store holds a key to one event of
    its session."""
    return f"{digest(canonical_json([machine, entity]))}:{after}"


class States(Component):
    """The daemon's state machines: the table, rebuilt at start-up and changed by requests."""

    def __init__(self, core: Core, machines_from_config: Mapping[str, Machine] | None = None) -> None:
        self.store = core.store
        self.append = core.append
        self.handed_over = core.handed_over
        self.table = StateTable(machines_from_config)
        self._lock = asyncio.Lock()

    def projection(self) -> Projection:
        return Projection("states", KINDS, self.table.apply, SESSION)

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
            for _ in range(WRITE_TRIES):
                changed = await self._change(machine_name, entity, to, reason)
                if changed is not None:
                    return changed
        raise Busy(f"{machine_name} {entity} was changed by other writers {WRITE_TRIES} times", "retry the change")

    async def _change(self, machine_name: str, entity: str, to: str, reason: str | None) -> tuple[Entry, bool] | None:
        """One try of :meth:`set`: None when another writer changed the entity first (its change
        is in the table by then)."""
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
        before, changes = entry.state, list(entry.changes)  # the table's entry moves as the log is handed over
        after = changes[-1].seq if changes else 0
        [result] = await self.append([NewEvent(SESSION, SET, payload, key=change_key(machine.name, entity, after))])
        seen = await self.handed_over(result.event.seq)
        if not result.created:
            if not seen:
                raise Busy(f"{machine.name} {entity} was changed by another daemon meanwhile", "retry in a moment")
            return None
        # What this change left, whatever other writers have changed since.
        event = result.event
        change = Change(event.seq, event.ts, before, target, reason, progress)
        return Entry(machine.name, entity, target, progress, [*changes, change]), True

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
            [result] = await self.append([parse_new_event(event)])
            if not await self.handed_over(result.event.seq):
                return machine, True  # committed: answered from what it wrote
            return self.table.machine(machine.name), True

    def listing(self, machine: str | None = None) -> list[Entry]:
        """Every entity that has changed state, by machine then entity."""
        if machine is not None:
            self.table.machine(machine)
        return [e for (m, _), e in sorted(self.table.entries.items()) if machine is None or m == machine]
