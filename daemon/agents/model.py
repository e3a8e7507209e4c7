"""Agents and their lifecycle states, as a projection of the log.

An agent is either spawned (``toka agent spawn``: an ``agent.spawn`` event names it, its type,
role, version, trace, model, window, thresholds and policy) or implicit: every agent of an
imported or hooked session that reports usage (Claude Code's ``main`` and its subagents, Codex's
``main``) is one, with the defaults. Within its session an agent is known by its name; spawned
agents have readable names that are unique on their own (``frontend-v2-3f9a``), implicit ones
are written ``<session>/<name>``.

States and reasons are those of DESIGN.md, and ENDED: the agent's session ended (its SessionEnd
hook) or went quiet, until its next activity. Every change of state is a ``lifecycle`` event
(``{agent, from, to, reason, detail, ...}``); :class:`Agents` applies ``agent.spawn``,
``lifecycle``, ``handoff`` and ``compression`` events (and the SessionEnd hook's) in log order, so
replaying the log rebuilds every state.
:func:`check_transition` is the one place that checks a change, against the transitions of
daemon/contract/transitions.py (``AGENT_LIFECYCLE``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from daemon.agents.usage import MAIN_AGENT, Thresholds, UsageFigures
from daemon.contract.kinds import Kind
from daemon.contract.policies import OnCritical
from daemon.contract.states import AgentState, Reason
from daemon.contract.transitions import AGENT_LIFECYCLE
from store.errors import Conflict, InvalidEvent, UsageError
from store.events import Event, parse_ts

STATES = AGENT_LIFECYCLE.states
REASONS = tuple(Reason)
SPAWN = Kind.AGENT_SPAWN
HANDOFF = Kind.HANDOFF
# Claude Code's and Codex's SessionEnd hook (`toka hook claude-code|codex`): the session's agents
# stopped there.
SESSION_END = Kind.HOOK_SESSION_END
# toka's own compression of an agent's events: the size of the context it left.
COMPRESSION = Kind.COMPRESSION
# Largest token count one call may report: far above any model's window.
MAX_TOKENS = 100_000_000


def check_transition(agent: Agent, to: str, reason: str | None = None) -> None:
    """Raise Conflict unless ``agent`` may go to state ``to`` (with ``reason``)."""
    if to not in STATES:
        raise UsageError(f"unknown state {to!r}", f"states: {', '.join(STATES)}")
    if reason is not None and to in (AgentState.TERMINATED, AgentState.ENDED) and reason not in REASONS:
        raise UsageError(f"unknown termination reason {reason!r}", f"reasons: {', '.join(REASONS)}")
    if to not in AGENT_LIFECYCLE.allowed(agent.state):
        allowed = ", ".join(sorted(AGENT_LIFECYCLE.allowed(agent.state))) or "none: it is final"
        raise Conflict(f"{agent.id} is {agent.state} and cannot go to {to}", f"from {agent.state}: {allowed}")


def fill_state(fill_pct: float, thresholds: Thresholds) -> str:
    if fill_pct >= thresholds.critical_pct:
        return AgentState.CRITICAL
    if fill_pct >= thresholds.warning_pct:
        return AgentState.WARNING
    return AgentState.ACTIVE


@dataclass(frozen=True, slots=True)
class Spawn:
    """What an agent is spawned with; :meth:`~daemon.lifecycle.service.Lifecycle.spawn` checks
    it (the values come from a request as sent: their types are checked there too)."""

    type: Any
    role: str | None = None
    model: str | None = None
    window: Any = None
    warning_pct: Any = None
    critical_pct: Any = None
    compress_pct: Any = None
    policy: str | None = None
    auto_compress: str | None = None
    session: str | None = None
    trace: str | None = None
    predecessor: str | None = None  # the agent this one continues, after a handoff
    handoff: str | None = None
    continuation: str | None = None


@dataclass(frozen=True, slots=True)
class UsageReport:
    """One call's usage as a client reports it (checked by ``Lifecycle.record_usage``)."""

    input_tokens: Any = 0
    output_tokens: Any = 0
    cache_creation_tokens: Any = 0
    cache_read_tokens: Any = 0
    model: Any = None

    def counts(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_tokens": self.cache_creation_tokens,
            "cache_read_tokens": self.cache_read_tokens,
        }


@dataclass
class Agent:
    session: str
    name: str
    spawned: bool = False
    type: str | None = None
    role: str | None = None
    version: int | None = None
    trace: str | None = None
    model: str | None = None
    window: int | None = None  # its own setting, over every other source
    thresholds: Thresholds = field(default_factory=Thresholds)
    policy: str = OnCritical.NOTIFY
    auto_compress: str | None = None  # a compression policy the daemon runs at the trigger
    predecessor: str | None = None
    successor: str | None = None
    state: str = AgentState.ACTIVE
    reason: str | None = None
    detail: str | None = None
    changed_ts: int | None = None
    # ENDED: the time of its last activity the change took into account (its SessionEnd, or its
    # last activity before the quiet spell); only activity after it brings the agent back.
    ended_since: int | None = None
    figures: UsageFigures | None = None  # from the usage seen since the daemon started

    @property
    def id(self) -> str:
        return self.name if self.spawned else f"{self.session}/{self.name}"

    @property
    def is_main(self) -> bool:
        """Whether it is its session's main agent: ``main``, or a spawned agent in a session of
        its own name. Events recorded without an agent are the main agent's."""
        return is_main(self.session, self.name)

    def owns(self, event: Event) -> bool:
        """Whether ``event`` is this agent's (see :func:`belongs`)."""
        return belongs(event, self.session, self.name)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "session": self.session,
            "name": self.name,
            "spawned": self.spawned,
            "type": self.type,
            "role": self.role,
            "version": self.version,
            "trace": self.trace,
            "model": self.model,
            "state": self.state,
            "reason": self.reason,
            "detail": self.detail,
            "policy": self.policy,
            "auto_compress": self.auto_compress,
            "predecessor": self.predecessor,
            "successor": self.successor,
        }


class Agents:
    """Every agent the log knows, kept up to date by :meth:`apply` in log order."""

    def __init__(self, thresholds: Thresholds, policy: str = OnCritical.NOTIFY) -> None:
        self.thresholds = thresholds
        self.policy = policy
        self._agents: dict[tuple[str, str], Agent] = {}
        self.handoffs: dict[str, int] = {}  # trace -> handoffs made
        self.ended: dict[str, int] = {}  # session -> when its latest SessionEnd was recorded
        self._spawned: dict[str, Agent] = {}  # spawned agents by name (their id)
        # (session, agent) -> (tokens, ts) of toka's latest compression of the agent's events: the
        # size of the context toka would give it now, apart from what its last request held.
        self.compressions: dict[tuple[str, str], tuple[int, int]] = {}
        self.ended_sessions: set[str] = set()  # sessions with an agent ENDED

    def __iter__(self) -> Any:
        return iter(list(self._agents.values()))

    def get(self, session: str, name: str) -> Agent | None:
        return self._agents.get((session, name))

    def implicit(self, session: str, name: str | None) -> Agent:
        """The agent ``name`` of ``session``, made with the defaults when first seen."""
        key = (session, name or MAIN_AGENT)
        agent = self._agents.get(key)
        if agent is None:
            agent = Agent(session, key[1], thresholds=self.thresholds, policy=self.policy)
            self._agents[key] = agent
        return agent

    def apply(self, event: Event) -> None:
        payload = event.payload
        if event.kind == SPAWN:
            agent = spawned_agent(event, self.thresholds)
            self._agents[(agent.session, agent.name)] = agent
            self._spawned[agent.name] = agent
        elif event.kind == Kind.LIFECYCLE and isinstance(payload.get("to"), str):
            agent = self.implicit(event.session, event.agent)
            agent.state = payload["to"]
            agent.reason = payload.get("reason")
            agent.detail = payload.get("detail")
            agent.changed_ts = event.ts
            if agent.state == AgentState.ENDED:
                agent.ended_since = _ts(payload.get("last_active")) or event.ts
                self.ended_sessions.add(agent.session)
            elif agent.session in self.ended_sessions:
                agent.ended_since = None
                if not any(a.session == agent.session and a.state == AgentState.ENDED for a in self):
                    self.ended_sessions.discard(agent.session)
        elif event.kind == COMPRESSION and isinstance(payload.get("tokens_after"), int):
            self.compressions[(event.session, event.agent or MAIN_AGENT)] = (payload["tokens_after"], event.ts)
        elif event.kind == SESSION_END:
            self.ended[event.session] = max(event.ts, self.ended.get(event.session, event.ts))
        elif event.kind == HANDOFF and isinstance(payload.get("trace"), str):
            self.handoffs[payload["trace"]] = self.handoffs.get(payload["trace"], 0) + 1
            agent = self.implicit(event.session, event.agent)
            agent.successor = payload.get("successor")

    def by_id(self, ref: str) -> Agent | None:
        """The agent whose id is exactly ``ref``: a spawned agent's name, or ``session/name``.
        Prefixes and session names are read by daemon/agents/refs.py."""
        session, _, name = ref.rpartition("/")
        if session:
            agent = self._agents.get((session, name))
            if agent is not None and not agent.spawned:
                return agent
        return self._spawned.get(ref)

    def next_version(self, trace: str, agent_type: str) -> int:
        versions = [a.version or 0 for a in self._agents.values() if a.trace == trace and a.type == agent_type]
        return max(versions, default=0) + 1


def _ts(value: Any) -> int | None:
    try:
        return parse_ts(value) if isinstance(value, str) else None
    except InvalidEvent:
        return None


def is_main(session: str, name: str) -> bool:
    """Whether agent ``name`` is the main agent of ``session``: ``main``, or a spawned agent whose
    session is its own."""
    return name in (MAIN_AGENT, session)


def belongs(event: Event, session: str, name: str) -> bool:
    """Whether ``event`` (of ``session``) is agent ``name``'s: recorded by it, or, for the
    session's main agent, recorded without an agent. A handoff, a working context, a compression
    and the usage of an agent are folded from its own events only: a subagent's prompt is not its
    parent's latest request."""
    if event.agent is None or event.agent == MAIN_AGENT:
        return is_main(session, name)
    return event.agent == name


def spawned_agent(event: Event, defaults: Thresholds) -> Agent:
    """The agent an ``agent.spawn`` event makes."""
    payload = event.payload
    limits = payload.get("thresholds") or {}
    return Agent(
        session=event.session,
        name=payload["agent"],
        spawned=True,
        type=payload.get("type"),
        role=payload.get("role"),
        version=payload.get("version"),
        trace=payload.get("trace"),
        model=payload.get("model"),
        window=payload.get("window"),
        thresholds=Thresholds(
            warning_pct=limits.get("warning_pct", defaults.warning_pct),
            critical_pct=limits.get("critical_pct", defaults.critical_pct),
            compress_pct=limits.get("compress_pct", defaults.compress_pct),
        ),
        policy=payload.get("policy") or OnCritical.NOTIFY,
        auto_compress=payload.get("auto_compress"),
        predecessor=payload.get("predecessor"),
        state=AgentState.INITIALIZING,
        changed_ts=event.ts,
    )


def spawn_thresholds(spec: Spawn, defaults: Thresholds) -> Thresholds:
    values = {"warning_pct": spec.warning_pct, "critical_pct": spec.critical_pct, "compress_pct": spec.compress_pct}
    for name, value in values.items():
        is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if value is not None and not (is_number and 0 < value <= 100):
            raise UsageError(f"{name} must be a percentage above 0 and at most 100, got {value!r}")
    thresholds = Thresholds(
        warning_pct=float(values["warning_pct"] or defaults.warning_pct),
        critical_pct=float(values["critical_pct"] or defaults.critical_pct),
        compress_pct=float(values["compress_pct"] or defaults.compress_pct),
    )
    if thresholds.warning_pct >= thresholds.critical_pct:
        raise UsageError(
            f"the warning threshold ({thresholds.warning_pct}%) must be below the critical one"
            f" ({thresholds.critical_pct}%)"
        )
    return thresholds


def usage_payload(report: UsageReport) -> dict[str, Any]:
    payload: dict[str, Any] = {}
    for name, value in report.counts().items():
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
            raise UsageError(f"{name} must be a whole number from 0 to {MAX_TOKENS:,}, got {value!r}")
        payload[name] = value
    prompt = ("input_tokens", "cache_creation_tokens", "cache_read_tokens")
    payload["context_tokens"] = sum(payload[name] for name in prompt)
    model = report.model
    if model is not None and not isinstance(model, str):
        raise UsageError(f"model must be a string, got {model!r}")
    payload["model"] = model
    return payload
