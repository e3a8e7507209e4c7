"""State machines without a daemon: the built-ins, validation of definitions and config, and the
table rebuilt from events."""

from __future__ import annotations

from typing import Any

import pytest

from daemon.contract.states import WORST_FIRST, AgentState, risk_rank
from daemon.contract.transitions import AGENT_LIFECYCLE, EXECUTION
from daemon.states.machines import AGENT, BUILTIN, SESSION_PHASES, machines_from_config, make_machine, read_machines
from daemon.states.table import MACHINE, SESSION, SET, StateTable
from store.errors import ConfigError, UsageError
from store.events import Event

REVIEW = {
    "name": "review",
    "states": ["draft", "in_review", "approved", "merged"],
    "initial": "draft",
    "transitions": {"draft": ["in_review"], "in_review": ["approved", "draft"], "approved": ["merged"]},
    "progress": {"draft": 0, "in_review": 50, "merged": 100},
}


def _event(seq: int, kind: str, payload: dict[str, Any], session: str = SESSION) -> Event:
    return Event(seq, f"{seq:064x}", session, None, kind, 1_700_000_000_000_000 + seq, (), "0" * 64, None, payload)


def _set(seq: int, machine: str, entity: str, to: str, **extra: Any) -> Event:
    return _event(seq, SET, {"machine": machine, "entity": entity, "to": to, **extra})


def test_the_agent_machine_starts_initializing_and_ends_terminated() -> None:
    assert AGENT.initial == "INITIALIZING"
    assert AGENT.final == ("TERMINATED",)
    assert AGENT.allowed("READY") == ("EXECUTING_TASK", "PAUSED", "COMPLETED", "FAILED", "TERMINATED")
    assert "READY" in AGENT.allowed("EXECUTING_TASK") and "WAITING" in AGENT.allowed("EXECUTING_TASK")
    assert AGENT.allowed("COMPLETED") == ("TERMINATED",) and AGENT.allowed("FAILED") == ("TERMINATED",)


def test_session_phases_run_in_order_with_progress_and_may_fail_until_final() -> None:
    phases = SESSION_PHASES
    order = [phases.initial]
    while phases.allowed(order[-1]):
        order.append(phases.allowed(order[-1])[0])
    assert order == [
        "initializing",
        "critical_infrastructure",
        "foundation_services",
        "parallel_development",
        "monitoring",
        "completion",
        "completed",
    ]
    assert [phases.progress[p] for p in order] == [0, 10, 25, 50, 80, 95, 100]
    assert set(phases.final) == {"completed", "failed"}
    assert all("failed" in phases.allowed(p) for p in order[:-1])


def test_a_valid_definition_becomes_a_machine() -> None:
    machine = make_machine(REVIEW)
    assert machine.final == ("merged",)
    assert machine.definition() == REVIEW
    assert machine.state_named("IN_REVIEW") == "in_review"  # a unique case-insensitive match


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": ""}, "machine name"),
        ({"name": "Has Space"}, "machine name"),
        ({"states": []}, "non-empty list"),
        ({"states": ["a", "a"], "initial": "a", "transitions": {}, "progress": {}}, "listed twice"),
        ({"initial": "nowhere"}, "initial state 'nowhere'"),
        ({"transitions": {"ghost": ["draft"]}}, "unknown state 'ghost'"),
        ({"transitions": {"draft": ["ghost"]}}, "names an unknown state"),
        ({"transitions": {"draft": ["draft"]}}, "cannot lead to itself"),
        ({"transitions": {"draft": "in_review"}}, "must be a list"),
        ({"progress": {"draft": 101}}, "percentage"),
        ({"progress": {"ghost": 5}}, "unknown state"),
        ({"states": ["ok", "bad state"], "initial": "ok", "transitions": {}, "progress": {}}, "not a valid name"),
    ],
)
def test_a_bad_definition_is_refused_with_what_is_wrong(change: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        make_machine(REVIEW | change)


def test_config_machines_take_their_name_from_the_table(tmp_path: Any) -> None:
    definition = {k: v for k, v in REVIEW.items() if k != "name"}
    machines = machines_from_config({"machines": {"review": definition}})
    assert machines["review"].source == "config" and machines["review"].definition() == REVIEW
    config = tmp_path / "config.toml"
    config.write_text(
        '[state.machines.deploy]\nstates = ["queued", "live"]\ninitial = "queued"\n'
        'transitions = { queued = ["live"] }\nprogress = { queued = 0, live = 100 }\n'
    )
    assert read_machines(config)["deploy"].final == ("live",)
    assert read_machines(tmp_path / "missing.toml") == {}
    assert machines_from_config(None) == {}


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"machines": {"agent": {"states": ["a"], "initial": "a"}}}, "built in"),
        ({"machines": {"x": {"states": ["a"], "initial": "a", "colour": "red"}}}, "unknown key colour"),
        ({"machines": {"x": {"states": ["a"], "initial": "b"}}}, "initial state 'b'"),
        ({"machine": {}}, "unknown key machine"),
        ({"machines": ["x"]}, "must be a table"),
    ],
)
def test_bad_config_machines_are_config_errors(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        machines_from_config(table)


def test_an_entity_that_never_changed_is_in_the_initial_state() -> None:
    table = StateTable()
    entry = table.entry(table.machine("session"), "build-42")
    assert (entry.state, entry.progress, entry.to_json()["since"], entry.to_json()["history_len"]) == (
        "initializing",
        0,
        None,
        0,
    )
    assert table.entries == {}


def _log() -> list[Event]:
    return [
        _set(1, "agent", "a1", "READY"),
        _event(2, MACHINE, REVIEW),
        _set(3, "session", "s1", "critical_infrastructure", reason="db up"),
        _set(4, "review", "pr-7", "in_review"),
        _set(5, "session", "s1", "foundation_services"),
        _set(6, "session", "s1", "failed", reason="disk full"),
        _set(7, "agent", "a1", "EXECUTING_TASK"),
        _set(8, "nosuch", "x", "A"),  # unknown machine: passed over
        _set(9, "agent", "a2", "DANCING"),  # unknown state: passed over
        _set(10, "agent", "a3", "READY", session="elsewhere"),
        _event(11, SET, {"machine": "agent", "entity": "a4", "to": "READY"}, session="elsewhere"),
        _event(12, MACHINE, {"name": "agent", "states": ["X"], "initial": "X"}),  # built in: kept
    ]


def test_the_table_is_a_projection_of_the_log() -> None:
    table = StateTable()
    for event in _log():
        table.apply(event)
    s1 = table.entries[("session", "s1")]
    assert (s1.state, s1.progress) == ("failed", 25)  # failed keeps the progress reached
    assert [(c.from_, c.to, c.reason) for c in s1.changes] == [
        ("initializing", "critical_infrastructure", "db up"),
        ("critical_infrastructure", "foundation_services", None),
        ("foundation_services", "failed", "disk full"),
    ]
    assert table.entries[("agent", "a1")].state == "EXECUTING_TASK"
    assert table.entries[("review", "pr-7")].progress == 50
    assert set(table.entries) == {("agent", "a1"), ("session", "s1"), ("review", "pr-7"), ("agent", "a3")}
    assert table.machines["agent"] is BUILTIN["agent"]


def test_replaying_the_same_events_gives_the_same_table() -> None:
    first, second = StateTable(), StateTable()
    for event in _log():
        first.apply(event)
    for event in _log():
        second.apply(event)
    assert first.snapshot() == second.snapshot()
    assert first.snapshot()["entries"]["session/s1"]["history_len"] == 3


def test_config_machines_are_not_replaced_by_the_log() -> None:
    declared = machines_from_config({"machines": {"review": {k: v for k, v in REVIEW.items() if k != "name"}}})
    table = StateTable(declared)
    table.apply(_event(1, MACHINE, REVIEW | {"states": ["draft", "gone"], "transitions": {}, "progress": {}}))
    assert table.machine("review").source == "config" and "merged" in table.machine("review").states


def test_the_agent_machine_and_the_lifecycle_are_declared_once_in_the_contract() -> None:
    assert (AGENT.states, AGENT.initial, dict(AGENT.transitions)) == (
        EXECUTION.states,
        EXECUTION.initial,
        dict(EXECUTION.transitions),
    )
    # Every state an agent can be left in has its place in the one worst-first order, but the
    # finished, which come after all the others.
    finished = {AgentState.TERMINATED, AgentState.HANDOFF_COMPLETE}
    assert set(WORST_FIRST) | finished == set(AGENT_LIFECYCLE.states)
    ranked = sorted(AGENT_LIFECYCLE.states, key=risk_rank)
    assert ranked[0] == AgentState.ERROR and set(ranked[-2:]) == finished
    assert AGENT_LIFECYCLE.final == (AgentState.TERMINATED,)
