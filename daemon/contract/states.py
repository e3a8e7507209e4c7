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
    # Its session ended (a SessionEnd hook) or went quiet for `lifecycle.end_after_s`: nothing runs
    # there now. Not final: the agent's next activity brings it back to the state its fill calls for.
    ENDED = "ENDED"


class Reason(StrEnum):
    """Why an agent was terminated or ended (a ``lifecycle`` event's ``reason``)."""

    CONTEXT_WINDOW_EXHAUSTED = "CONTEXT_WINDOW_EXHAUSTED"
    TASK_COMPLETED = "TASK_COMPLETED"
    ERROR = "ERROR"
    MANUAL_TERMINATION = "MANUAL_TERMINATION"
    ORCHESTRATOR_SHUTDOWN = "ORCHESTRATOR_SHUTDOWN"
    TIMEOUT = "TIMEOUT"
    RESOURCE_CLEANUP = "RESOURCE_CLEANUP"
    HANDOFF_COMPLETE = "HANDOFF_COMPLETE"
    SESSION_ENDED = "SESSION_ENDED"  # ENDED: the agent's own SessionEnd hook (Claude Code's, Codex's)


_S = AgentState  # short, for the tables below
# The states usage moves an agent between, by how full its context is.
FILL_STATES = (_S.ACTIVE, _S.WARNING, _S.CRITICAL)
# How bad each state is, the worst first: the order `agent list` and `status` show agents in, and
# what an alert takes for going up (daemon/alerts). The finished (TERMINATED, HANDOFF_COMPLETE)
# come after all of these, alike.
WORST_FIRST = (
    _S.ERROR, _S.CRITICAL, _S.HANDOFF_PENDING, _S.WARNING, _S.PAUSED, _S.INITIALIZING, _S.ACTIVE, _S.ENDED
)  # fmt: skip
# The states of an agent that no longer runs: `agent list` puts them after the live, the dashboard
# shows them on request.
NOT_LIVE = (_S.ENDED, _S.TERMINATED, _S.HANDOFF_COMPLETE)
# The states of agents in trouble or close to it: `status` reports them, the status line names them.
AT_RISK = WORST_FIRST[:4]


def is_live(state: str) -> bool:
    """Whether an agent in ``state`` still runs (or may: PAUSED, ERROR wait for someone)."""
    return state not in NOT_LIVE


def risk_rank(state: str) -> int:
    """``state``'s place in ``WORST_FIRST`` (0: the worst); the finished and unknown come last."""
    return WORST_FIRST.index(_S(state)) if state in WORST_FIRST else len(WORST_FIRST)
