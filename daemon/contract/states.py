"""An agent's lifecycle states and how bad each is: the one order `agent list`, `status`, the
alerts and the status line go by. The changes allowed between them are in transitions.py; this
module stays light (no dataclasses), as the status line, run every few seconds, imports it.
"""

from __future__ import annotations

from enum import StrEnum


class AgentState(StrEnum):
    INITIALIZING = "INITIALIZING"
    ACTIVE = "ACTIVE"
    WARNING = "WARNING"
    CRITICAL = "CRITICAL"
    HANDOFF_PENDING = "HANDOFF_PENDING"
    HANDOFF_COMPLETE = "HANDOFF_COMPLETE"
    TERMINATED = "TERMINATED"
    ERROR = "ERROR"
    PAUSED = "PAUSED"


class Reason(StrEnum):
    """Why an agent was terminated (a ``lifecycle`` event's ``reason``)."""

    CONTEXT_WINDOW_EXHAUSTED = "CONTEXT_WINDOW_EXHAUSTED"
    TASK_COMPLETED = "TASK_COMPLETED"
    ERROR = "ERROR"
    MANUAL_TERMINATION = "MANUAL_TERMINATION"
    ORCHESTRATOR_SHUTDOWN = "ORCHESTRATOR_SHUTDOWN"
    TIMEOUT = "TIMEOUT"
    RESOURCE_CLEANUP = "RESOURCE_CLEANUP"
    HANDOFF_COMPLETE = "HANDOFF_COMPLETE"


_S = AgentState  # short, for the tables below
# The states usage moves an agent between, by how full its context is.
FILL_STATES = (_S.ACTIVE, _S.WARNING, _S.CRITICAL)
# How bad each state is, the worst first: the order `agent list` and `status` show agents in, and
# what an alert takes for going up (daemon/alerts). The finished (TERMINATED, HANDOFF_COMPLETE)
# come after all of these, alike.
WORST_FIRST = (_S.ERROR, _S.CRITICAL, _S.HANDOFF_PENDING, _S.WARNING, _S.PAUSED, _S.INITIALIZING, _S.ACTIVE)
# The states of agents in trouble or close to it: `status` reports them, the status line names them.
AT_RISK = WORST_FIRST[:4]


def risk_rank(state: str) -> int:
    """``state``'s place in ``WORST_FIRST`` (0: the worst); the finished and unknown come last."""
    return WORST_FIRST.index(_S(state)) if state in WORST_FIRST else len(WORST_FIRST)
