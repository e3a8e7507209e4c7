"""The ``log.prune`` and ``log.gc`` operations: retention (store/retention.py, docs/retention.md).

``log.prune`` replaces, in each session (or the one named), the events older than ``before`` by
a checkpoint. Some sessions are left alone and reported as skipped, with the reason:

- toka's own sessions (``toka.memory``, ``toka.state``, ``toka.deps``, ``toka.pool``): the
  context store, the state machines, the dependencies and the pool's records are rebuilt from
  every one of their events;
- a session with a live agent spawned by ``toka agent spawn``: its spawn holds its settings.

``log.gc`` deletes the payloads no event refers to, but keeps those a compression summary cites
as ``[blob <digest> <size>]``, so ``toka blob show`` still finds them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from daemon.agents.model import Agent
from daemon.compress.service import COMPRESSION
from daemon.server.ops import Context, _arg, _progress, _session_name, _ts_arg, op
from store.base import EventQuery
from store.errors import UsageError
from store.events import format_ts

SYSTEM_PREFIX = "toka."


def _skipped(session: str, live: dict[str, Agent]) -> str | None:
    """Why ``session`` is not pruned, or None; ``live``: the live spawned agents by session."""
    if session.startswith(SYSTEM_PREFIX):
        return "toka's own state: its projections need every event"
    if (agent := live.get(session)) is not None:
        return f"agent {agent.id} is {agent.state}; its spawn holds its settings (terminate it first)"
    return None


@op("log.prune")
async def log_prune(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    before = _ts_arg(args, "before")
    if before is None:
        raise UsageError("argument 'before' is required", "give a time, e.g. 2026-01-31T00:00:00Z")
    dry_run = _arg(args, "dry_run", bool, False)
    named = await _session_name(ctx, args, required=False)
    store = ctx.daemon.store
    sessions = [named] if named is not None else [info.session for info in await store.sessions()]
    live = {a.session: a for a in ctx.daemon.lifecycle.agents if a.spawned and a.state != "TERMINATED"}
    pruned, skipped = [], []
    progress = _progress(ctx, args)
    for number, session in enumerate(sorted(sessions), 1):
        reason = _skipped(session, live)
        if reason is not None:
            skipped.append({"session": session, "reason": reason})
        elif (done := await store.prune(session, before, dry_run)) is not None:
            pruned.append(done.to_json())
        if progress is not None:
            progress(number, len(sessions))
    await asyncio.sleep(0)  # let the last progress line go out before the answer
    return {
        "before": format_ts(before),
        "dry_run": dry_run,
        "events": sum(p["events"] for p in pruned),
        "sessions": pruned,
        "skipped": skipped,
    }


@op("log.gc")
async def log_gc(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    dry_run = _arg(args, "dry_run", bool, False)
    vacuum = _arg(args, "vacuum", bool, False)
    store = ctx.daemon.store
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
