"""The current state of every entity in each machine, as a projection of the log.

Every change is a ``state.set`` event ``{machine, entity, from, to, reason, progress}`` in the
fixed session ``toka.state`` (one chain for every machine, so ``toka verify`` covers them all and
one query replays them); a machine registered over the protocol is a ``state.machine`` event
there. :class:`StateTable` applies the events of that session in log order, so replaying the log
rebuilds the same table; events that name an unknown machine or state (appended by hand, say)
are passed over.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from daemon.contract.kinds import Kind
from daemon.states.machines import BUILTIN, Machine, make_machine
from store.errors import NotFound, UsageError
from store.events import Event, format_ts

SESSION = "toka.state"
SET = Kind.STATE_SET
MACHINE = Kind.STATE_MACHINE
KINDS = (SET, MACHINE)


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
