"""When agents end and come back: the lifecycle's ENDED state (daemon/contract/states.py).

An agent ends when its session does: a SessionEnd hook (Claude Code's, or Codex's through `toka
hook codex`) moves its session's running agents to ENDED with reason SESSION_ENDED; the end of
the one task of a `codex exec` session (its rollout's ``task_complete``, in a session whose
``session.meta`` says ``codex_source: "exec"``) with reason TASK_COMPLETED; an agent with no
activity of its own for ``lifecycle.end_after_s`` goes ENDED with reason TIMEOUT (an interactive
Codex rollout marks the end of a turn, ``task_complete``, never of its session, so an imported
one ends this way). Its next activity after the time it ended at brings it back to the state
its fill calls for. Activity is what the agent records, not what toka appends to its session
(store/kinds.py, ``TOKA_KINDS``). Each change is a ``lifecycle`` event, with the last activity it
took into account (``last_active``), so a restart rebuilds the same states.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from daemon.agents.directory import Directory
from daemon.agents.model import Agent, Agents
from daemon.agents.usage import latest_context
from daemon.contract.kinds import Kind
from daemon.contract.states import AT_RISK, FILL_STATES, AgentState, Reason, risk_rank
from daemon.core import Core
from store.base import EventQuery
from store.events import Event, format_ts
from store.kinds import is_activity

# A session whose agents reported no usage and changed no state for this long is not at risk in
# `status`, when `lifecycle.end_after_s` is 0 (which ends no agent).
ENDED_AFTER_S = 24 * 3600
# Lifecycle.transition: (agent, to, reason, detail, cause, extra payload, key) -> the event.
Transition = Callable[..., Awaitable[Event]]


def quiet_span(seconds: float) -> str:
    """``1 d``, ``6 h``, ``90 s``: how long an agent was quiet, for a change's detail."""
    if seconds >= 86400:
        return f"{seconds / 86400:g} d"
    if seconds >= 3600:
        return f"{seconds / 3600:g} h"
    return f"{seconds:g} s"


def is_task_complete(event: Event) -> bool:
    """Whether ``event`` is a Codex rollout's end of a task (daemon/ingest/codex.py: ``event``)."""
    return event.kind == Kind.EVENT and event.payload.get("type") == "task_complete"


class Ending:
    """Ends agents and brings them back, through the lifecycle's one way of changing a state."""

    def __init__(
        self,
        core: Core,
        directory: Directory,
        end_after_s: float,
        transition: Transition,
        fill_state: Callable[[Agent], str],
    ) -> None:
        self.core = core
        self.directory = directory
        self.end_after_s = end_after_s
        self._transition = transition
        self._fill_state = fill_state

    async def session_ended(self, event: Event) -> None:
        """A SessionEnd hook: its session's running agents are ENDED (SESSION_ENDED); Codex's end
        of a task: see :meth:`task_completed`."""
        if is_task_complete(event):
            await self.task_completed(event)
            return
        why = event.payload.get("reason")
        detail = "session ended" + (f" ({why})" if isinstance(why, str) and why else "")
        for agent in await self.directory.of_session(event.session):
            if agent.state in FILL_STATES:
                extra = {"last_active": format_ts(event.ts)}
                await self._transition(agent, AgentState.ENDED, Reason.SESSION_ENDED, detail, event, extra)

    async def task_completed(self, event: Event) -> None:
        """A Codex task completed: the end of a `codex exec` session (one task), ENDED
        (TASK_COMPLETED); of an interactive one's turn only, which changes nothing."""
        query = EventQuery(session=event.session, kinds=(Kind.SESSION_META,), order="desc", limit=1)
        meta = await self.core.store.query(query)
        if not meta or meta[0].payload.get("codex_source") != "exec":
            return
        for agent in await self.directory.of_session(event.session):
            if agent.state in FILL_STATES and agent.owns(event):
                extra = {"last_active": format_ts(event.ts)}
                detail = "codex exec: its task completed"
                await self._transition(agent, AgentState.ENDED, Reason.TASK_COMPLETED, detail, event, extra)

    async def come_back(self, agent: Agent, event: Event) -> None:
        """An ENDED agent active again (``event`` is its own, after it ended): back to the state
        its fill calls for."""
        if not agent.owns(event) or not is_activity(event.kind) or event.ts <= (agent.ended_since or 0):
            return
        if event.kind == Kind.HOOK_SESSION_END:
            return
        await self._transition(agent, self._fill_state(agent), detail=f"active again ({event.kind})", cause=event)

    async def end_quiet_sessions(self, sessions: set[str]) -> None:
        """End the agents of ``sessions`` gone quiet: after usage of theirs was evaluated, so that
        an import of old history ends its agents as it lands."""
        if self.end_after_s > 0:
            for session in sorted(sessions):
                await self.end_quiet(await self.directory.of_session(session), listed=True)

    async def end_quiet(self, agents: list[Agent], listed: bool = False) -> None:
        """End those of ``agents`` with no activity for ``end_after_s`` (TIMEOUT). ``listed``: the
        sessions' last activity was just read (``Directory.known``)."""
        if self.end_after_s <= 0:
            return
        quiet_since = round((self.core.clock() - self.end_after_s) * 1_000_000)
        for agent in agents:
            if agent.state not in FILL_STATES:
                continue
            figures = agent.figures
            if figures is None or figures.last_ts is None:
                figures = await latest_context(self.core.store, agent.session, agent.name, (Kind.USAGE,))
            if not listed:
                await self.directory.session_active(agent.session, fresh=True)
            last = self.directory.last_active(agent, figures)
            if last is None or last >= quiet_since:
                continue
            detail = f"no activity for {quiet_span(self.end_after_s)} (last active {format_ts(last)})"
            extra: dict[str, Any] = {"last_active": format_ts(last)}
            key = f"lifecycle:quiet:{agent.name}:{last}"
            await self._transition(agent, AgentState.ENDED, Reason.TIMEOUT, detail, extra=extra, key=key)

    def at_risk(self, agents: Agents) -> list[dict[str, Any]]:
        """Agents in trouble or close to it, worst first, with their fill when known. The agents
        of a session that ended (its SessionEnd recorded after their last call, or no call for
        ``end_after_s``, or ``ENDED_AFTER_S`` when that is 0) are not: nothing runs there to run
        out of room, whether or not they were moved to ENDED yet."""
        every = list(agents)
        risky = [agent for agent in every if agent.state in AT_RISK]  # few, if any: `status` asks often
        if not risky:
            return []
        sessions = {agent.session for agent in risky}
        active: dict[str, int] = {}  # session -> its agents' latest call or change of state
        for agent in every:
            if agent.session in sessions:
                last = max(agent.changed_ts or 0, (agent.figures.last_ts if agent.figures else None) or 0)
                active[agent.session] = max(last, active.get(agent.session, 0))
        quiet_since = round((self.core.clock() - (self.end_after_s or ENDED_AFTER_S)) * 1_000_000)
        found = []
        for agent in risky:
            last = active[agent.session]
            if last < quiet_since or agents.ended.get(agent.session, -1) >= last:
                continue
            window, _ = self.directory.window(agent)
            fill = None if agent.figures is None else agent.figures.fill_pct(window)
            found.append({"id": agent.id, "state": agent.state, "fill_pct": fill, "detail": agent.detail})
        return sorted(found, key=lambda a: (risk_rank(a["state"]), -(a["fill_pct"] or 0), a["id"]))
