"""The ``log.prune`` and ``log.gc`` operations: retention (store/retention.py, docs/retention.md).

``log.prune`` replaces, in each session (or the one named), the events older than ``before`` by
a checkpoint. Some sessions are left alone and reported as skipped, with the reason:

- toka's own sessions (``toka.memory``, ``toka.state``, ``toka.deps``, ``toka.pool``): the
  memory, the state machines, the dependencies and the pool's records are rebuilt from
  every one of their events;
- a session with a live agent spawned by ``toka agent spawn``: its spawn holds its settings.

``log.gc`` deletes the payloads no event refers to, but keeps those a compression summary cites
as ``[blob <digest> <size>]``, so ``toka blob show`` still finds them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from daemon.agents.model import Agent, Agents
from daemon.agents.refs import Refs
from daemon.component import Component
from daemon.compress.service import COMPRESSION
from daemon.core import Core
from daemon.rpc.registry import Call, Ops
from daemon.rpc.requests import Timestamp
from store.base import EventQuery, EventStore
from store.errors import UsageError
from store.events import format_ts

SYSTEM_PREFIX = "toka."


@dataclass(frozen=True, slots=True)
class Retention(Component):
    """What retention is handed: the core, the agents (a live one's session is kept) and the
    reader of session names."""

    core: Core
    agents: Agents
    refs: Refs

    @property
    def store(self) -> EventStore:
        return self.core.store


OPS = Ops(Retention)


def _skipped(session: str, live: dict[str, Agent]) -> str | None:
    """Why ``session`` is not pruned, or None; ``live``: the live spawned agents by session."""
    if session.startswith(SYSTEM_PREFIX):
        return "toka's own state: its projections need every event"
    if (agent := live.get(session)) is not None:
        return f"agent {agent.id} is {agent.state}; its spawn holds its settings (terminate it first)"
    return None


@dataclass(frozen=True, slots=True)
class Prune:
    before: Timestamp | None = None
    session: str | None = None
    dry_run: bool = False


@OPS.op("log.prune", Prune, progress=True)
async def log_prune(retention: Retention, request: Prune, call: Call) -> dict[str, Any]:
    before, dry_run = request.before, request.dry_run
    if before is None:
        raise UsageError("argument 'before' is required", "give a time, e.g. 2026-01-31T00:00:00Z")
    store = retention.store
    named = None if request.session is None else await retention.refs.session(request.session)
    sessions = [named] if named is not None else [info.session for info in await store.sessions()]
    live = {a.session: a for a in retention.agents if a.spawned and a.state != "TERMINATED"}
    pruned, skipped = [], []
    progress = call.progress
    for number, session in enumerate(sorted(sessions), 1):
        reason = _skipped(session, live)
        if reason is not None:
            skipped.append({"session": session, "reason": reason})
        elif (done := await store.prune(session, before, dry_run)) is not None:
            pruned.append(done.to_json())
        if progress is not None:
            progress(number, len(sessions))
    await call.progress_sent()
    return {
        "before": format_ts(before),
        "dry_run": dry_run,
        "events": sum(p["events"] for p in pruned),
        "sessions": pruned,
        "skipped": skipped,
    }


@dataclass(frozen=True, slots=True)
class Collect:
    dry_run: bool = False
    vacuum: bool = False


@OPS.op("log.gc", Collect)
async def log_gc(retention: Retention, request: Collect, call: Call) -> dict[str, Any]:
    dry_run, vacuum = request.dry_run, request.vacuum
    store = retention.store
    cited = set()
    async for event in store.scan(EventQuery(kinds=(COMPRESSION,))):
        for elided in event.payload.get("elided") or ():
            if isinstance(elided, dict) and isinstance(elided.get("digest"), str):
                cited.add(elided["digest"])
    disk_before = await store.disk_bytes()
    collected = await store.collect_garbage(sorted(cited), dry_run)
    if vacuum and not dry_run:
        await store.vacuum()
    return {
        "dry_run": dry_run,
        **collected.to_json(),
        "cited": len(cited),
        "vacuumed": vacuum and not dry_run,
        "disk_bytes_before": disk_before,
        "disk_bytes_after": await store.disk_bytes(),
    }
