"""The ``agents.*`` operations and ``usage`` (docs/protocol.md): spawn, list, get, pause,
resume, terminate, report usage, and the headroom of a session or an agent. They answer from the
lifecycle projection (daemon/agents/lifecycle.py); the context figures of an agent that reported no usage
since the daemon started are read back from the log."""

from __future__ import annotations

from typing import Any

from daemon.agents.lifecycle import Lifecycle
from daemon.agents.model import Agent
from daemon.agents.usage import MAIN_AGENT, latest_context, session_usage
from daemon.server.ops import Context, _arg, _required, _session_name, op
from store.base import EventQuery
from store.errors import Ambiguous, NotFound, UsageError
from store.events import format_ts

# The order `agent list` and `status` show agents in: those closest to trouble first.
RISK = {"ERROR": 0, "CRITICAL": 1, "HANDOFF_PENDING": 2, "WARNING": 3, "PAUSED": 4, "INITIALIZING": 5, "ACTIVE": 6}
# Lifecycle events `agent show` lists, newest last.
HISTORY = 50
_COUNTS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")


async def agent_json(ctx: Context, agent: Agent) -> dict[str, Any]:
    """The agent with its context fill: from the usage seen since the daemon started, else read
    back from its latest usage event."""
    lifecycle: Lifecycle = ctx.daemon.lifecycle
    figures = agent.figures
    if figures is None or figures.context_tokens is None:
        figures = await latest_context(ctx.daemon.store, agent.session, agent.name)
        figures.model = figures.model or agent.model
    window, source = figures.window(agent.window, ctx.daemon.settings.windows)
    return agent.to_json() | {
        "model": figures.model or agent.model,
        "context_tokens": figures.context_tokens,
        "context_window": window,
        "window_source": source,
        "fill_pct": figures.fill_pct(window),
        "thresholds": agent.thresholds.to_json(),
        "handoffs_in_trace": lifecycle.agents.handoffs.get(agent.trace or agent.session, 0),
    }


async def known_agents(ctx: Context) -> list[Agent]:
    """Every agent: spawned ones, and each agent of every session that recorded usage."""
    lifecycle: Lifecycle = ctx.daemon.lifecycle
    for info in await ctx.daemon.store.sessions():
        if "usage" in info.kinds:
            for name in info.agents or [MAIN_AGENT]:
                lifecycle.agents.implicit(info.session, name)
    return list(lifecycle.agents)


async def find_agent(ctx: Context, ref: str) -> Agent:
    """An agent by id or unique prefix. The sessions are read (for agents the daemon has not
    met since it started) only when the agents it knows do not answer."""
    agents = ctx.daemon.lifecycle.agents
    try:
        return agents.find(ref)
    except (NotFound, Ambiguous):
        await known_agents(ctx)
        return agents.find(ref)


async def agent_or_session(ctx: Context, ref: str) -> Agent:
    """An agent by id or prefix; else the main agent of a session by name or prefix (made with
    the defaults when the session has reported no usage)."""
    agents = ctx.daemon.lifecycle.agents
    try:
        return await find_agent(ctx, ref)
    except NotFound:
        session = (await ctx.daemon.store.session(ref)).session
        return agents.get(session, MAIN_AGENT) or agents.implicit(session, MAIN_AGENT)


def at_risk_first(agents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(agents, key=lambda a: (RISK.get(a["state"], 9), -(a["fill_pct"] or 0), a["id"]))


@op("agents.list")
async def agents_list(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    trace = _arg(args, "trace", str)
    state = _arg(args, "state", str)
    chosen = [
        a
        for a in await known_agents(ctx)
        if (trace is None or a.trace == trace) and (state is None or a.state == state.upper())
    ]
    return {"agents": at_risk_first([await agent_json(ctx, a) for a in chosen])}


@op("agents.get")
async def agents_get(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    agent = await find_agent(ctx, _required(args, "agent", str))
    query = EventQuery(session=agent.session, kinds=("lifecycle",), order="desc", limit=HISTORY * 4)
    changes = [e for e in await ctx.daemon.store.query(query) if (e.agent or MAIN_AGENT) == agent.name]
    history = [{"seq": e.seq, "id": e.id, "ts": format_ts(e.ts), **e.payload} for e in reversed(changes[:HISTORY])]
    return await agent_json(ctx, agent) | {"history": history}


@op("agents.spawn")
async def agents_spawn(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    names = ("type", "role", "model", "window", "policy", "auto_compress", "session", "trace")
    fields = {name: args.get(name) for name in names}
    fields |= {name: args.get(name) for name in ("warning_pct", "critical_pct")}
    for name in ("role", "model", "session", "trace", "policy", "auto_compress"):
        _arg(args, name, str)
    agent = await ctx.daemon.lifecycle.spawn(fields)
    return await agent_json(ctx, agent)


async def _move(ctx: Context, args: dict[str, Any], to: str, reason: str | None = None) -> dict[str, Any]:
    detail = _arg(args, "detail", str)
    found = await find_agent(ctx, _required(args, "agent", str))
    agent = await ctx.daemon.lifecycle.move(found.id, to, reason, detail)
    return await agent_json(ctx, agent)


@op("agents.pause")
async def agents_pause(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    return await _move(ctx, args, "PAUSED")


@op("agents.resume")
async def agents_resume(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    return await _move(ctx, args, "RESUME")


@op("agents.terminate")
async def agents_terminate(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    reason = (_arg(args, "reason", str) or "MANUAL_TERMINATION").upper()
    return await _move(ctx, args, "TERMINATED", reason)


@op("agents.usage")
async def agents_usage(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    """Report one call's usage for an agent; answered once its lifecycle has been evaluated."""
    counts = {name: args.get(name, 0) for name in _COUNTS} | {"model": args.get("model")}
    if not any(counts[name] for name in _COUNTS):
        raise UsageError("a usage report needs at least one token count", "e.g. --input 1200 --output 300")
    found = await find_agent(ctx, _required(args, "agent", str))
    agent = await ctx.daemon.lifecycle.record_usage(found.id, counts)
    return await agent_json(ctx, agent)


@op("usage")
async def usage(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    """The headroom document of a session (its main chain) or of one agent."""
    lifecycle = ctx.daemon.lifecycle
    target = _arg(args, "target", str)  # a session or an agent, as `toka usage` takes it
    if target is not None and ("/" in target or any(a.spawned and a.name.startswith(target) for a in lifecycle.agents)):
        args = {"agent": target}
    elif target is not None:
        args = {"session": target}
    if args.get("agent") is not None:
        agent = await find_agent(ctx, _required(args, "agent", str))
        figures = await session_usage(ctx.daemon.store, agent.session, agent.name)
        figures.model = figures.model or agent.model
        window = figures.window(agent.window, ctx.daemon.settings.windows)
        return figures.to_json(window, agent.thresholds) | {"agent": agent.id, "state": agent.state}
    session = await _session_name(ctx, args)
    assert session is not None  # required above
    figures = await session_usage(ctx.daemon.store, session)
    main = lifecycle.agents.get(session, MAIN_AGENT)
    document = figures.to_json(figures.window(overrides=ctx.daemon.settings.windows), lifecycle.defaults)
    return document | {"state": main.state if main is not None else None}
