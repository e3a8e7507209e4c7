"""The ``handoffs.*`` operations (docs/protocol.md): create, get, list, chain, stats, verify; and
``notes.add``, the notes the next handoff lists."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from daemon.contract import results
from daemon.handoff.service import Handoffs, summaries, summary
from daemon.handoff.service import stats as handoff_stats
from daemon.rpc.registry import Call, Ops
from daemon.rpc.requests import NoArgs
from store.errors import NotFound

OPS = Ops(Handoffs)


def _full(event_summary: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    return event_summary | {k: payload.get(k) for k in ("document", "markdown", "prompt")}


@dataclass(frozen=True, slots=True)
class Create:
    target: str  # an agent, or a session (its main agent)
    reason: str | None = None


@OPS.op("handoffs.create", Create)
async def handoffs_create(handoffs: Handoffs, request: Create, call: Call) -> dict[str, Any]:
    """Build and store the handoff document of a session (its main agent) or an agent, now."""
    agent = await handoffs.directory.refs.agent(request.target)
    event = await handoffs.build(agent, reason=request.reason)
    return _full(summary(event, active=True), event.payload)


@dataclass(frozen=True, slots=True)
class AddNote:
    target: str  # a session (its main agent) or an agent
    kind: str
    text: str
    reason: str | None = None
    agent: str | None = None  # an agent of the target's session, by name


@OPS.op("notes.add", AddNote)
async def notes_add(handoffs: Handoffs, request: AddNote, call: Call) -> results.Noted:
    """Record a note for the next handoff document of the agent the target names."""
    target = request.target if request.agent is None else f"{request.target}/{request.agent}"
    agent = await handoffs.directory.refs.agent(target)
    return await handoffs.note(agent, request.kind, request.text, request.reason)


@dataclass(frozen=True, slots=True)
class HandoffRef:
    id: str


@OPS.op("handoffs.get", HandoffRef)
async def handoffs_get(handoffs: Handoffs, request: HandoffRef, call: Call) -> dict[str, Any]:
    event = await handoffs.get(request.id)
    trace = event.payload.get("trace")
    same_trace = [e for e in await handoffs.all() if e.payload.get("trace") == trace]
    return _full(summary(event, active=same_trace[-1].id == event.id), event.payload)


@dataclass(frozen=True, slots=True)
class ListHandoffs:
    trace: str | None = None
    active: bool = False
    agent: str | None = None  # only the handoffs from or to this agent (a session: its main agent)


@OPS.op("handoffs.list", ListHandoffs)
async def handoffs_list(handoffs: Handoffs, request: ListHandoffs, call: Call) -> dict[str, Any]:
    rows = summaries(await handoffs.all())
    if request.trace is not None:
        rows = [r for r in rows if r["trace"] == request.trace]
    if request.agent is not None:
        agent = (await handoffs.directory.refs.agent(request.agent)).id
        rows = [r for r in rows if agent in (r["predecessor"], r["successor"])]
    if request.active:
        rows = [r for r in rows if r["active"]]
    return {"handoffs": rows}


@dataclass(frozen=True, slots=True)
class Chain:
    trace: str


@OPS.op("handoffs.chain", Chain)
async def handoffs_chain(handoffs: Handoffs, request: Chain, call: Call) -> dict[str, Any]:
    """A trace: its agents by version, and the handoffs between them."""
    trace = request.trace
    await handoffs.directory.known()
    rows = [r for r in summaries(await handoffs.all()) if r["trace"] == trace]
    agents = sorted((a for a in handoffs.directory.agents if a.trace == trace), key=lambda a: a.version or 0)
    if not rows and not agents:
        raise NotFound(f"no trace {trace!r}", "list traces with `toka handoff list` or `toka agent list`")
    return {"trace": trace, "agents": [a.to_json() for a in agents], "handoffs": rows}


@OPS.op("handoffs.stats", NoArgs)
async def handoffs_stats(handoffs: Handoffs, request: NoArgs, call: Call) -> dict[str, Any]:
    return handoff_stats(await handoffs.all())


@OPS.op("handoffs.verify", HandoffRef)
async def handoffs_verify(handoffs: Handoffs, request: HandoffRef, call: Call) -> dict[str, Any]:
    return await handoffs.verify(await handoffs.get(request.id))
