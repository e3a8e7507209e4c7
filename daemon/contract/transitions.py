"""An agent's lifecycle, and the built-in `agent` machine, as state models.

One model serves both kinds of state toka keeps. A :class:`StateModel` is states in their
declared order, the one an entity starts in, and where each state may go (a state with nowhere
to go is final). ``AGENT_LIFECYCLE`` is the context-fill lifecycle of ``toka agent`` (the daemon's
agents projection checks every change against it); ``EXECUTION`` is the built-in ``agent``
machine of ``toka state`` (docs/state.md), the work an agent does, which the state machines
component declares from it. The two are kept apart on purpose: one follows token usage, the other
the work, and an orchestrator sets the second.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from daemon.contract.states import FILL_STATES
from daemon.contract.states import AgentState as _S


@dataclass(frozen=True)
class StateModel:
    """States in their declared order, where an entity starts, where each state may go."""

    states: tuple[str, ...]
    initial: str
    transitions: Mapping[str, tuple[str, ...]]

    def allowed(self, state: str) -> tuple[str, ...]:
        return self.transitions.get(state, ())

    @property
    def final(self) -> tuple[str, ...]:
        return tuple(s for s in self.states if not self.allowed(s))


# A spawned agent starts INITIALIZING; an implicit one (an imported or hooked session's) is ACTIVE
# from its first usage. A running agent ENDS when its session does (SessionEnd, or no activity
# for `lifecycle.end_after_s`), and comes back with its next activity.
AGENT_LIFECYCLE = StateModel(
    states=tuple(_S),
    initial=_S.INITIALIZING,
    transitions={
        _S.INITIALIZING: (*FILL_STATES, _S.PAUSED, _S.TERMINATED, _S.ERROR),
        _S.ACTIVE: (_S.WARNING, _S.CRITICAL, _S.PAUSED, _S.HANDOFF_PENDING, _S.TERMINATED, _S.ERROR, _S.ENDED),
        _S.WARNING: (_S.ACTIVE, _S.CRITICAL, _S.PAUSED, _S.HANDOFF_PENDING, _S.TERMINATED, _S.ERROR, _S.ENDED),
        _S.CRITICAL: (_S.ACTIVE, _S.WARNING, _S.PAUSED, _S.HANDOFF_PENDING, _S.TERMINATED, _S.ERROR, _S.ENDED),
        _S.HANDOFF_PENDING: (_S.HANDOFF_COMPLETE, _S.CRITICAL, _S.ERROR),
        _S.HANDOFF_COMPLETE: (_S.TERMINATED,),
        _S.PAUSED: (*FILL_STATES, _S.TERMINATED, _S.ERROR),
        _S.ERROR: (_S.TERMINATED,),
        _S.ENDED: (*FILL_STATES, _S.TERMINATED, _S.ERROR),
    },
)


# The built-in `agent` machine of `toka state`: an agent's execution states (docs/state.md).
# COMPLETED and FAILED may still be cleaned up to TERMINATED; TERMINATED is final.
EXECUTION = StateModel(
    states=("INITIALIZING", "READY", "EXECUTING_TASK", "WAITING", "PAUSED", "COMPLETED", "FAILED", "TERMINATED"),
    initial="INITIALIZING",
    transitions={
        "INITIALIZING": ("READY", "FAILED", "TERMINATED"),
        "READY": ("EXECUTING_TASK", "PAUSED", "COMPLETED", "FAILED", "TERMINATED"),
        "EXECUTING_TASK": ("READY", "WAITING", "PAUSED", "COMPLETED", "FAILED", "TERMINATED"),
        "WAITING": ("EXECUTING_TASK", "READY", "PAUSED", "FAILED", "TERMINATED"),
        "PAUSED": ("READY", "EXECUTING_TASK", "WAITING", "FAILED", "TERMINATED"),
        "COMPLETED": ("TERMINATED",),
        "FAILED": ("TERMINATED",),
    },
)
