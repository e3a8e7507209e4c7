"""The ``handoffs.*`` operations (docs/protocol.md): create, get, list, chain, stats, verify."""

from __future__ import annotations

from typing import Any

from daemon.agents.ops import agent_or_session, known_agents
from daemon.handoff import service as handoffs
from daemon.server.ops import Context, _arg, _required, op
from store.errors import NotFound


def _full(event_summary: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    return event_summary | {k: payload.get(k) for k in ("document", "markdown", "prompt")}


@op("handoffs.create")
async def handoffs_create(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    """Build and store the handoff document of a session (its main agent) or an agent, now."""
    agent = await agent_or_session(ctx, _required(args, "target", str))
    event = await handoffs.build_handoff(ctx.daemon.lifecycle, agent, reason=_arg(args, "reason", str))
    return _full(handoffs.summary(event, active=True), event.payload)


@op("handoffs.get")
async def handoffs_get(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    lifecycle = ctx.daemon.lifecycle
    event = await handoffs.get_handoff(lifecycle, _required(args, "id", str))
    trace = event.payload.get("trace")
    same_trace = [e for e in await handoffs.all_handoffs(lifecycle) if e.payload.get("trace") == trace]
    return _full(handoffs.summary(event, active=same_trace[-1].id == event.id), event.payload)


@op("handoffs.list")
async def handoffs_list(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    trace = _arg(args, "trace", str)
    rows = handoffs.summaries(await handoffs.all_handoffs(ctx.daemon.lifecycle))
    if trace is not None:
        rows = [r for r in rows if r["trace"] == trace]
    if _arg(args, "active", bool, False):
        rows = [r for r in rows if r["active"]]
    return {"handoffs": rows}


@op("handoffs.chain")
async def handoffs_chain(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    """A trace: its agents by version, and the handoffs between them."""
    trace = _required(args, "trace", str)
    await known_agents(ctx)
    lifecycle = ctx.daemon.lifecycle
    rows = [r for r in handoffs.summaries(await handoffs.all_handoffs(lifecycle)) if r["trace"] == trace]
    agents = sorted((a for a in lifecycle.agents if a.trace == trace), key=lambda a: a.version or 0)
    if not rows and not agents:
        raise NotFound(f"no trace {trace!r}", "list traces with `toka handoff list` or `toka agent list`")
    return {"trace": trace, "agents": [a.to_json() for a in agents], "handoffs": rows}


@op("handoffs.stats")
async def handoffs_stats(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    return handoffs.stats(await handoffs.all_handoffs(ctx.daemon.lifecycle))


@op("handoffs.verify")
async def handoffs_verify(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    lifecycle = ctx.daemon.lifecycle
    event = await handoffs.get_handoff(lifecycle, _required(args, "id", str))
    return await handoffs.verify(lifecycle, event)
