"""The ``agents.*`` operations and ``usage`` (docs/protocol.md): spawn, list, get, pause,
resume, terminate, report usage, and the headroom of a session or an agent. They answer from the
lifecycle's projection (daemon/lifecycle/service.py); the context figures of an agent that
reported no usage since the daemon started are read back from the log."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from daemon.agents.model import Agent, Spawn, UsageReport
from daemon.agents.usage import MAIN_AGENT, latest_context, session_usage
from daemon.contract.fill import context_fill
from daemon.contract.kinds import Kind
from daemon.contract.states import AgentState, Reason, is_live, risk_rank
from daemon.lifecycle.service import Lifecycle
from daemon.rpc.registry import Call, Ops
from store.base import EventQuery
from store.errors import UsageError
from store.events import format_ts

OPS = Ops(Lifecycle)

# Lifecycle events `agent show` lists, newest last.
HISTORY = 50


def compressed_json(lifecycle: Lifecycle, agent: Agent) -> dict[str, Any]:
    """toka's compressed context of the agent (its latest compression), apart from its fill."""
    tokens, ts = lifecycle.agents.compressions.get((agent.session, agent.name), (None, None))
    return {"compressed_tokens": tokens, "compressed_ts": None if ts is None else format_ts(ts)}


async def agent_json(lifecycle: Lifecycle, agent: Agent, listed: bool = False) -> dict[str, Any]:
    """The agent with its context fill (what its latest request held): from the usage seen since
    the daemon started, else read back from its latest usage event; when it was last active
    (``listed``: its session's last activity was just read)."""
    figures = agent.figures
    if figures is None or figures.context_tokens is None:
        figures = await latest_context(lifecycle.core.store, agent.session, agent.name)
        figures.model = figures.model or agent.model
    window, source = lifecycle.directory.window_of(figures, agent)
    await lifecycle.directory.session_active(agent.session, fresh=not listed)
    last = lifecycle.directory.last_active(agent, figures)
    return (
        agent.to_json()
        | dict(context_fill(figures.model or agent.model, figures.context_tokens, window, source))
        | compressed_json(lifecycle, agent)
        | {
            "live": is_live(agent.state),
            "last_active": None if last is None else format_ts(last),
            "thresholds": agent.thresholds.to_json(),
            "handoffs_in_trace": lifecycle.agents.handoffs.get(agent.trace or agent.session, 0),
        }
    )


def at_risk_first(agents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The live first, those closest to trouble first (daemon/contract/states.py, ``WORST_FIRST``);
    then those that no longer run, the last active first."""

    live = sorted(
        (a for a in agents if a["live"]), key=lambda a: (risk_rank(a["state"]), -(a["fill_pct"] or 0), a["id"])
    )
    done = sorted((a for a in agents if not a["live"]), key=lambda a: a["id"])
    done.sort(key=lambda a: a["last_active"] or "", reverse=True)  # ISO times in UTC sort as they read
    return live + done


@dataclass(frozen=True, slots=True)
class ListAgents:
    trace: str | None = None
    state: str | None = None
    live: bool = False  # only the agents that still run (not ENDED, TERMINATED, HANDOFF_COMPLETE)


@OPS.op("agents.list", ListAgents)
async def agents_list(lifecycle: Lifecycle, request: ListAgents, call: Call) -> dict[str, Any]:
    chosen = [
        a
        for a in await lifecycle.directory.known()
        if (request.trace is None or a.trace == request.trace)
        and (request.state is None or a.state == request.state.upper())
        and (not request.live or is_live(a.state))
    ]
    return {"agents": at_risk_first([await agent_json(lifecycle, a, listed=True) for a in chosen])}


@dataclass(frozen=True, slots=True)
class Complete:
    """What a shell completes: the sessions (and, with ``agents``, the agents) ``prefix`` begins."""

    prefix: str = ""
    agents: bool = False
    limit: int = 100


@OPS.op("names.complete", Complete)
async def names_complete(lifecycle: Lifecycle, request: Complete, call: Call) -> dict[str, Any]:
    found = await lifecycle.directory.refs.completions(request.prefix, request.agents, max(1, request.limit))
    return {"names": [completion.to_json() for completion in found]}


@dataclass(frozen=True, slots=True)
class AgentRef:
    agent: str


@OPS.op("agents.get", AgentRef)
async def agents_get(lifecycle: Lifecycle, request: AgentRef, call: Call) -> dict[str, Any]:
    agent = await lifecycle.directory.refs.agent(request.agent, "agent")
    query = EventQuery(session=agent.session, kinds=(Kind.LIFECYCLE,), order="desc", limit=HISTORY * 4)
    changes = [e for e in await lifecycle.core.store.query(query) if agent.owns(e)]
    history = [{"seq": e.seq, "id": e.id, "ts": format_ts(e.ts), **e.payload} for e in reversed(changes[:HISTORY])]
    return await agent_json(lifecycle, agent) | {"history": history}


@dataclass(frozen=True, slots=True)
class SpawnAgent:
    """As sent; the lifecycle checks what the types leave open (daemon/agents/model.py Spawn)."""

    type: Any = None
    role: str | None = None
    model: str | None = None
    window: Any = None
    warning_pct: Any = None
    critical_pct: Any = None
    policy: str | None = None
    auto_compress: str | None = None
    session: str | None = None
    trace: str | None = None


@OPS.op("agents.spawn", SpawnAgent)
async def agents_spawn(lifecycle: Lifecycle, request: SpawnAgent, call: Call) -> dict[str, Any]:
    spec = Spawn(
        type=request.type,
        role=request.role,
        model=request.model,
        window=request.window,
        warning_pct=request.warning_pct,
        critical_pct=request.critical_pct,
        policy=request.policy,
        auto_compress=request.auto_compress,
        session=request.session,
        trace=request.trace,
    )
    return await agent_json(lifecycle, await lifecycle.spawn(spec))


@dataclass(frozen=True, slots=True)
class Move:
    agent: str
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class Terminate:
    agent: str
    detail: str | None = None
    reason: str | None = None  # a termination reason


async def _move(lifecycle: Lifecycle, request: Move | Terminate, to: str, reason: str | None = None) -> dict[str, Any]:
    agent = await lifecycle.directory.refs.agent(request.agent, "agent")
    return await agent_json(lifecycle, await lifecycle.move(agent, to, reason, request.detail))


@OPS.op("agents.pause", Move)
async def agents_pause(lifecycle: Lifecycle, request: Move, call: Call) -> dict[str, Any]:
    return await _move(lifecycle, request, AgentState.PAUSED)


@OPS.op("agents.resume", Move)
async def agents_resume(lifecycle: Lifecycle, request: Move, call: Call) -> dict[str, Any]:
    return await _move(lifecycle, request, "RESUME")


@OPS.op("agents.terminate", Terminate)
async def agents_terminate(lifecycle: Lifecycle, request: Terminate, call: Call) -> dict[str, Any]:
    return await _move(lifecycle, request, AgentState.TERMINATED, (request.reason or Reason.MANUAL_TERMINATION).upper())


@dataclass(frozen=True, slots=True)
class ReportUsage:
    agent: str
    input_tokens: Any = 0
    output_tokens: Any = 0
    cache_creation_tokens: Any = 0
    cache_read_tokens: Any = 0
    model: Any = None


@OPS.op("agents.usage", ReportUsage)
async def agents_usage(lifecycle: Lifecycle, request: ReportUsage, call: Call) -> dict[str, Any]:
    """Report one call's usage for an agent; answered once its lifecycle has been evaluated."""
    report = UsageReport(
        request.input_tokens,
        request.output_tokens,
        request.cache_creation_tokens,
        request.cache_read_tokens,
        request.model,
    )
    if not any(report.counts().values()):
        raise UsageError("a usage report needs at least one token count", "e.g. --input 1200 --output 300")
    agent = await lifecycle.directory.refs.agent(request.agent, "agent")
    return await agent_json(lifecycle, await lifecycle.record_usage(agent, report))


@dataclass(frozen=True, slots=True)
class Usage:
    target: str | None = None  # a session (its main agent) or an agent, as `toka usage` takes it
    agent: str | None = None  # the same, under the names older clients send
    session: str | None = None


@OPS.op("usage", Usage)
async def usage(lifecycle: Lifecycle, request: Usage, call: Call) -> dict[str, Any]:
    """The headroom document of an agent (a session names its main agent). A session's main
    agent (``main``) is charged with the calls of the subagents it ran: its totals are the
    session's, its context fill its own. Any other agent's figures are its own calls'."""
    ref = request.target or request.agent or request.session
    if ref is None:
        raise UsageError("argument 'target' is required", "give a session or an agent")
    agent = await lifecycle.directory.refs.agent(ref)
    whole_session = agent.name == MAIN_AGENT
    figures = await session_usage(lifecycle.core.store, agent.session, None if whole_session else agent.name)
    figures.model = figures.model or agent.model
    document = figures.to_json(lifecycle.directory.window_of(figures, agent), agent.thresholds)
    document.pop("agent", None)
    del document["session"]
    return {
        "session": agent.session,
        "agent": agent.id,
        **document,
        **compressed_json(lifecycle, agent),
        "state": agent.state,
    }
