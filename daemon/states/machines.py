"""Declared state machines: the built-in ones and those of ``config.toml``.

A machine names its states, its initial state, the transitions it allows and, optionally, a
progress percentage per state. Two are built in (``agent``: an agent's execution states;
``session``: the phases of a session's work, with progress), more come from ``config.toml``
(``[state.machines.NAME]``, read by :func:`machines_from_config`) or are registered over the
protocol as ``state.machine`` events (daemon/states/service.py). An entity is any string (an
agent id, a session name, a workstream); until its first change it is in its machine's initial
state, and the current state of each is daemon/states/table.py's projection of the log.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daemon.config_file import read_toml
from daemon.contract.transitions import EXECUTION, StateModel
from store.errors import ConfigError, UsageError

# Machine names are written on the command line and in TOML keys: keep them plain.
_MACHINE_NAME = re.compile(r"^[a-z][a-z0-9_.-]{0,63}$")
_STATE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
# Bounds that no sensible machine reaches, so one registration cannot bloat every answer.
MAX_STATES = 100


@dataclass(frozen=True, kw_only=True)
class Machine(StateModel):
    """A named state machine: the states, where it starts and where each may go
    (:class:`~daemon.contract.states.StateModel`), with a progress per state and where it came from."""

    name: str
    progress: Mapping[str, float] = field(default_factory=dict)
    source: str = "registered"  # "builtin", "config" or "registered"

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
    return Machine(
        name=name, states=tuple(states), initial=initial, transitions=transitions, progress=progress, source=source
    )


# The execution states of an agent (docs/state.md), declared with the lifecycle's in the contract.
AGENT = make_machine(
    {
        "states": list(EXECUTION.states),
        "initial": EXECUTION.initial,
        "transitions": {state: list(targets) for state, targets in EXECUTION.transitions.items()},
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
