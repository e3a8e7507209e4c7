"""The daemon's lifecycle manager: usage moves agents between states, people and scripts move
them by hand, and a spawned agent with the ``handoff`` policy hands its work on at CRITICAL.

Every committed event passes :meth:`Lifecycle.committed`: spawns, lifecycle changes and
handoffs update the :class:`~daemon.agents.model.Agents` projection at once; usage events (and
Claude Code's SessionStart, which names the model) queue for :meth:`Lifecycle.run`, which folds
each into its agent's figures and, when the context fill crosses a threshold, appends the
``lifecycle`` event that moves the agent (keyed by the usage event, so it is appended once).
Changes of state go through one lock, so two requests never act on the same stale state.

Agents end (daemon/lifecycle/ending.py) at a SessionEnd hook or after ``lifecycle.end_after_s``
without activity: looked for after each run of evaluations (an import of old history ends its
agents as it lands) and on a timer; their next activity brings them back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections import deque
from typing import Any

from daemon.agents.directory import Directory
from daemon.agents.model import (
    COMPRESSION,
    HANDOFF,
    SESSION_END,
    SPAWN,
    Agent,
    Agents,
    Spawn,
    UsageReport,
    check_transition,
    fill_state,
    spawn_thresholds,
    spawned_agent,
    usage_payload,
)
from daemon.agents.usage import FIGURE_KINDS, STATUSLINE, Thresholds
from daemon.component import Component, Projection
from daemon.compress.service import Compressor
from daemon.compress.settings import CompressionSettings
from daemon.contract.kinds import Kind
from daemon.contract.policies import AUTO_COMPRESS_OFF, CompressionPolicy, OnCritical, choices_of
from daemon.contract.states import FILL_STATES, AgentState, Reason
from daemon.core import Core
from daemon.cost.settings import ModelSettings
from daemon.handoff.service import Handoffs
from daemon.lifecycle.ending import Ending, is_task_complete
from daemon.lifecycle.settings import LifecycleSettings
from store.errors import Busy, Conflict, UsageError
from store.events import Event, digest, fit_name, format_ts, parse_new_event
from store.kinds import is_activity

log = logging.getLogger("toka.daemon")

# The longest between two looks for agents gone quiet (shorter when `end_after_s` is).
QUIET_CHECK_S = 60.0
# The kinds the agents' projection is built from (daemon/agents/model.py).
PROJECTED = (SPAWN, Kind.LIFECYCLE, HANDOFF, SESSION_END, COMPRESSION)
# Versions a spawn tries when other daemons keep spawning the one it meant to (each try follows
# a spawn it had not seen).
SPAWN_TRIES = 8
# Hex digits of the digest of trace, type and version that end an agent's name (worker-v1-3fa2):
# short to read; when two traces' agents would share a name, the later takes twice as many.
NAME_DIGITS = 4


class Lifecycle(Component):
    """Moves agents through their states; holds the agents' projection and directory, the
    handoffs and the compressor it acts through."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.settings = core.settings
        lifecycle = core.settings[LifecycleSettings]
        self.defaults = Thresholds(lifecycle.warning_pct, lifecycle.critical_pct)
        self.agents = Agents(self.defaults)
        self.directory = Directory(core.store, self.agents, core.settings[ModelSettings].windows)
        self.handoffs = Handoffs(core, self.directory)
        self._queue: deque[Event] = deque()
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()
        self._current: int | None = None  # the seq of the event being evaluated
        self.compressor = Compressor(core, self.directory, self.evaluated)
        self._evaluated = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None
        self._quiet_task: asyncio.Task[None] | None = None
        self._touched: set[str] = set()  # sessions whose usage this run evaluated
        self.end_after_s = lifecycle.end_after_s
        self.ending = Ending(core, self.directory, self.end_after_s, self._transition, self._fill_state)

    def projection(self) -> Projection:
        return Projection("agents", PROJECTED, self.agents.apply)

    def committed(self, events: list[Event], own: bool) -> None:
        """Queue committed usage for evaluation when ``own`` (the events were committed by this
        daemon: on a shared log, the daemon that recorded usage acts on it)."""
        if not own:
            return
        for event in events:
            if (
                event.kind in FIGURE_KINDS
                or event.kind in (COMPRESSION, SESSION_END)
                or is_task_complete(event)
                or (event.session in self.agents.ended_sessions and is_activity(event.kind))
            ):
                self._queue.append(event)
                self._wake.set()

    async def start(self) -> None:
        self._task = asyncio.create_task(self.run(), name="lifecycle")
        if self.end_after_s > 0:
            self._quiet_task = asyncio.create_task(self._watch_quiet(), name="lifecycle.quiet")

    async def stop(self, deadline: float) -> None:
        """Let the usage already committed move its agents (within ``deadline``), then stop."""
        if self._quiet_task is not None:
            self._quiet_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._quiet_task
        if self._task is None:
            return
        try:
            await asyncio.wait_for(self.drained(), deadline)
        except TimeoutError:
            log.warning("lifecycle: usage left unevaluated at shutdown")
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def run(self) -> None:
        """Evaluate queued usage, in commit order, until cancelled."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                event = self._queue.popleft()
                self._current = event.seq
                try:
                    async with self._lock:
                        await self._evaluate(event)
                        if not self._queue and self._touched:
                            touched, self._touched = self._touched, set()
                            await self.ending.end_quiet_sessions(touched)
                except Exception:  # one agent's trouble must not stop the others' lifecycle
                    log.exception("lifecycle: usage event %s not evaluated", event.id)
                async with self._evaluated:
                    self._current = None
                    self._evaluated.notify_all()

    def _settled(self, seq: int) -> bool:
        """Whether every usage event up to ``seq`` has been evaluated."""
        queued_after = not self._queue or self._queue[0].seq > seq
        return queued_after and (self._current is None or self._current > seq)

    async def drained(self) -> None:
        """Wait until every usage event queued so far has been evaluated."""
        async with self._evaluated:
            await self._evaluated.wait_for(lambda: not self._queue and self._current is None)

    async def evaluated(self, seq: int) -> None:
        """Wait until every usage event up to ``seq`` has been evaluated."""
        # Usage is queued as it is handed over: on a shared log, after the follower has read
        # what other daemons committed before it.
        await self.core.handed_over(seq)
        if self._settled(seq):
            return
        async with self._evaluated:
            await self._evaluated.wait_for(lambda: self._settled(seq))

    async def _evaluate(self, event: Event) -> None:
        if event.kind == SESSION_END or is_task_complete(event):
            await self.ending.session_ended(event)  # a SessionEnd hook, or Codex's end of a task
            return
        agent = self.agents.implicit(event.session, event.agent)
        if event.kind not in FIGURE_KINDS and event.kind != COMPRESSION:
            if agent.state == AgentState.ENDED:
                await self.ending.come_back(agent, event)  # activity that wakes an ended agent
            return
        figures = self.directory.figures(agent)
        if event.kind in FIGURE_KINDS:
            figures.add(event)
        if agent.state == AgentState.ENDED:
            await self.ending.come_back(agent, event)
        compressed = None
        if event.kind == COMPRESSION:
            # toka's compressed context, not the agent's: its fill stays what its last request
            # held; its state follows the compressed size until its next call says otherwise.
            if not isinstance(event.payload.get("tokens_after"), int):
                return
            compressed = context = event.payload["tokens_after"]
        else:
            # A response's usage moves the fill; a status line may move the window under it.
            if event.kind not in (Kind.USAGE, STATUSLINE) or event.payload.get("revision") is True:
                return
            if event.kind == Kind.USAGE:
                self._touched.add(agent.session)
            if figures.context_tokens is None:
                return
            context = figures.context_tokens
        if agent.state not in (*FILL_STATES, AgentState.INITIALIZING):
            return  # paused, handing off, terminated, ended: usage is recorded, the state stays
        window, _ = self.directory.window(agent)
        fill = 100 * context / window
        if event.kind == Kind.USAGE:
            self.compressor.consider(agent, fill)
        target = fill_state(fill, agent.thresholds)
        if target == agent.state:
            return
        detail = f"context {fill:.1f}% of {window:,} tokens"
        if compressed is not None:
            detail = f"toka's compressed context {fill:.1f}% of {window:,} tokens"
        extra = None if compressed is None else {"compressed_tokens": compressed}
        await self._transition(agent, target, detail=detail, cause=event, extra=extra)
        if target == AgentState.CRITICAL and agent.spawned and agent.policy == OnCritical.HANDOFF:
            await self._hand_off(agent, event)

    async def _watch_quiet(self) -> None:
        """Every agent gone quiet for ``end_after_s`` is ENDED, looked for now and then."""
        pause = min(QUIET_CHECK_S, max(self.end_after_s / 4, 0.05))
        while True:
            try:
                agents = [a for a in await self.directory.known() if a.state in FILL_STATES]
                async with self._lock:
                    await self.ending.end_quiet(agents, listed=True)
            except Exception:  # the next look tries again
                log.exception("lifecycle: the look for quiet agents failed")
            await asyncio.sleep(pause)

    async def _transition(
        self,
        agent: Agent,
        to: str,
        reason: str | None = None,
        detail: str | None = None,
        cause: Event | None = None,
        extra: dict[str, Any] | None = None,
        key: str | None = None,
    ) -> Event:
        check_transition(agent, to, reason)
        payload: dict[str, Any] = {"agent": agent.id, "from": agent.state, "to": to, "reason": reason, "detail": detail}
        if agent.figures is not None and agent.figures.context_tokens is not None:
            window, _ = self.directory.window(agent)
            payload |= {
                "context_tokens": agent.figures.context_tokens,
                "context_window": window,
                "fill_pct": agent.figures.fill_pct(window),
            }
        payload |= extra or {}
        event: dict[str, Any] = {
            "session": agent.session,
            "agent": agent.name,
            "kind": Kind.LIFECYCLE,
            "payload": payload,
        }
        if cause is not None:
            payload["cause"] = cause.id
            # One cause may move several agents (a SessionEnd its session's): each its own key.
            suffix = "" if agent.owns(cause) else f":{agent.name}"
            event |= {"ts": format_ts(cause.ts), "key": f"lifecycle:{cause.id[:16]}:{to}{suffix}"}
        if key is not None:
            event["key"] = key
        [result] = await self.core.append([parse_new_event(event)])
        # The agent's state moves when the change reaches the projection: the next check of a
        # transition (a handoff makes several in a row) and the answer read it there.
        await self.core.handed_over(result.event.seq)
        return result.event

    def at_risk(self) -> list[dict[str, Any]]:
        """Agents in trouble or close to it, worst first (daemon/lifecycle/ending.py)."""
        return self.ending.at_risk(self.agents)

    # Requests ------------------------------------------------------------------------------

    async def spawn(self, spec: Spawn, parents: list[str] | None = None) -> Agent:
        async with self._lock:
            return await self._spawn(spec, parents)

    async def _spawn(self, spec: Spawn, parents: list[str] | None = None) -> Agent:
        agent_type = fit_name(spec.type, 40)
        if agent_type is None or not agent_type.replace("-", "").replace("_", "").isalnum():
            raise UsageError("an agent needs a type: letters, digits, - and _", "e.g. --type frontend")
        trace = fit_name(spec.trace, 120) or f"t-{secrets.token_hex(4)}"
        window = spec.window
        if window is not None and (not isinstance(window, int) or isinstance(window, bool) or window <= 0):
            raise UsageError(f"a context window must be a positive number of tokens, got {window!r}")
        thresholds = spawn_thresholds(spec, self.defaults)
        policy = spec.policy or self.settings[LifecycleSettings].on_critical
        if policy not in choices_of(OnCritical):
            raise UsageError(f"unknown policy {policy!r}", f"policies: {', '.join(OnCritical)}")
        auto_compress = spec.auto_compress or self.settings[CompressionSettings].auto_compress
        if auto_compress not in (AUTO_COMPRESS_OFF, *choices_of(CompressionPolicy)):
            choices = ", ".join((AUTO_COMPRESS_OFF, *CompressionPolicy))
            raise UsageError(f"unknown compression policy {auto_compress!r}", f"use one of: {choices}")
        width = NAME_DIGITS
        for _ in range(SPAWN_TRIES):
            version = self.agents.next_version(trace, agent_type)
            name = f"{agent_type}-v{version}-{digest(f'{trace}/{agent_type}/{version}'.encode())[:width]}"
            payload = {
                "agent": name,
                "type": agent_type,
                "role": spec.role,
                "version": version,
                "trace": trace,
                "model": spec.model,
                "window": window,
                "thresholds": thresholds.to_json(),
                "policy": policy,
                "auto_compress": auto_compress,
                "predecessor": spec.predecessor,
                "handoff": spec.handoff,
                "continuation": spec.continuation,
            }
            session = fit_name(spec.session, 200) or name
            event = {"session": session, "agent": name, "kind": SPAWN, "key": f"spawn:{name}", "payload": payload}
            if parents:
                event["parents"] = parents
            [result] = await self.core.append([parse_new_event(event)])
            if not await self.core.handed_over(result.event.seq):
                if not result.created:
                    raise Busy(f"{name} was spawned by another daemon meanwhile", "spawn it again in a moment")
                return spawned_agent(result.event, self.defaults)  # committed: answered from what it wrote
            if result.created:
                agent = self.agents.get(session, name)
                assert agent is not None  # handed over: in the projection
                return agent
            held = result.event.payload
            if (held.get("trace"), held.get("type"), held.get("version")) != (trace, agent_type, version):
                # Not this agent spawned first by another daemon, but another trace's agent whose
                # name has the same short digest: this one takes a longer one.
                width = min(width * 2, 64)
                continue
            # Another daemon spawned this version first: its spawn is in the projection now.
        raise Busy(f"agents of type {agent_type} in trace {trace} were spawned faster than this one", "spawn it again")

    async def move(self, agent: Agent, to: str, reason: str | None = None, detail: str | None = None) -> Agent:
        """pause (to PAUSED), resume (to None: the state its fill calls for), terminate."""
        async with self._lock:
            if to == "RESUME":
                if agent.state != AgentState.PAUSED:
                    raise Conflict(f"{agent.id} is {agent.state}, not PAUSED", "only a paused agent resumes")
                to = self._fill_state(agent)
            await self._transition(agent, to, reason, detail)
            return agent

    def _fill_state(self, agent: Agent) -> str:
        if agent.figures is None or agent.figures.context_tokens is None:
            return AgentState.ACTIVE
        window, _ = self.directory.window(agent)
        return fill_state(100 * agent.figures.context_tokens / window, agent.thresholds)

    async def record_usage(self, agent: Agent, report: UsageReport) -> Agent:
        """Append a usage event for the agent and wait until its lifecycle has been evaluated."""
        payload = usage_payload(report)
        event = {"session": agent.session, "agent": agent.name, "kind": Kind.USAGE, "payload": payload}
        [result] = await self.core.append([parse_new_event(event)])
        await self.evaluated(result.event.seq)
        return agent

    async def _hand_off(self, agent: Agent, cause: Event) -> None:
        trace = agent.trace or agent.session
        made = self.agents.handoffs.get(trace, 0)
        if made >= self.settings[LifecycleSettings].max_handoffs:
            detail = (
                f"handoff refused: trace {trace} has had {made} handoffs, the most lifecycle.max_handoffs allows;"
                " finish the work by hand or raise the limit"
            )
            await self._transition(agent, AgentState.ERROR, reason=Reason.ERROR, detail=detail)
            return
        await self._transition(agent, AgentState.HANDOFF_PENDING, detail="building the handoff document")
        version = (agent.version or 0) + 1
        successor = f"{agent.type}-v{version}-{digest(f'{trace}/{agent.type}/{version}'.encode())[:4]}"
        try:
            handoff = await self.handoffs.build(agent, successor=successor, reason=Reason.CONTEXT_WINDOW_EXHAUSTED)
        except Exception as exc:
            log.exception("lifecycle: the handoff of %s failed", agent.id)
            await self._transition(agent, AgentState.ERROR, reason=Reason.ERROR, detail=f"handoff failed: {exc}")
            return
        await self._transition(agent, AgentState.HANDOFF_COMPLETE, detail=f"handoff {handoff.id[:12]} to {successor}")
        detail = f"succeeded by {successor}"
        await self._transition(agent, AgentState.TERMINATED, reason=Reason.CONTEXT_WINDOW_EXHAUSTED, detail=detail)
        successor_spec = Spawn(
            type=agent.type,
            role=agent.role,
            trace=trace,
            model=agent.model,
            window=agent.window,
            warning_pct=agent.thresholds.warning_pct,
            critical_pct=agent.thresholds.critical_pct,
            compress_pct=agent.thresholds.compress_pct,
            policy=agent.policy,
            auto_compress=agent.auto_compress,
            predecessor=agent.id,
            handoff=handoff.id,
            continuation=handoff.payload.get("prompt"),
        )
        await self._spawn(successor_spec, parents=[handoff.id])
