"""The ``agents.*`` operations (docs/protocol.md): spawn, list, get, pause, resume, terminate and
report usage. They answer from the lifecycle projection (daemon/agents.py); the context figures
of an agent that reported no usage since the daemon started are read back from the log."""

from __future__ import annotations

from typing import Any

from daemon.agents import Lifecycle
from daemon.lifecycle import Agent
from daemon.ops import Context, _arg, _required, op
from daemon.usage import MAIN_AGENT, latest_context
from store.base import EventQuery
from store.errors import NotFound, UsageError
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


async def agent_or_session(ctx: Context, ref: str) -> Agent:
    """An agent by id or prefix; else the main agent of a session by name or prefix (made with
    the defaults when the session has reported no usage)."""
    await known_agents(ctx)
    agents = ctx.daemon.lifecycle.agents
    try:
        return agents.find(ref)
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
    await known_agents(ctx)
    agent = ctx.daemon.lifecycle.agents.find(_required(args, "agent", str))
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
    await known_agents(ctx)
    detail = _arg(args, "detail", str)
    agent = await ctx.daemon.lifecycle.move(_required(args, "agent", str), to, reason, detail)
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
    await known_agents(ctx)
    counts = {name: args.get(name, 0) for name in _COUNTS} | {"model": args.get("model")}
    if not any(counts[name] for name in _COUNTS):
        raise UsageError("a usage report needs at least one token count", "e.g. --input 1200 --output 300")
    agent = await ctx.daemon.lifecycle.record_usage(_required(args, "agent", str), counts)
    return await agent_json(ctx, agent)
