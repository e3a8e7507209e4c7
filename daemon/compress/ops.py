"""The ``compress``, ``context`` and ``blobs.get`` operations (docs/protocol.md)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from daemon.agents.ops import agent_or_session
from daemon.compress.context import assemble
from daemon.compress.service import Compress
from daemon.server.ops import Context, _arg, _progress, _required, _session_name, op
from store.errors import NotFound, TokaError

# A context's budget when the request names none: a 200k window less what the model answers.
DEFAULT_BUDGET = 100_000
# How long an assembled context stays in the pool for a repeated request.
CONTEXT_TTL_S = 300.0


@op("compress")
async def compress_op(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    """Compress a session (its main agent's, or the agent's own), or say what would be done."""
    lifecycle = ctx.daemon.lifecycle
    settings = ctx.daemon.settings
    agent = await agent_or_session(ctx, _arg(args, "agent", str) or _required(args, "session", str))
    request = Compress(
        policy=_arg(args, "policy", str) or settings.policy,
        target_pct=float(_arg(args, "target_pct", (int, float)) or settings.target_pct),
        dry_run=_arg(args, "dry_run", bool, False),
        force=_arg(args, "force", bool, False),
    )
    result = await lifecycle.compressor.run(agent, request, _progress(ctx, args))
    await asyncio.sleep(0)  # let the last progress line go out before the answer
    return result


@op("context")
async def context_op(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    session = await _session_name(ctx, args)
    assert session is not None  # required
    budget = _arg(args, "budget", int, DEFAULT_BUDGET)
    policy = _arg(args, "policy", str) or ctx.daemon.settings.policy
    memory, pool = ctx.daemon.memory, ctx.daemon.pool
    # The same log, budget, policy and memory give the same context: kept in the pool for a while.
    # The first seq tells a session that was pruned since (its last seq is the same).
    info = await ctx.daemon.store.session(session)
    key = f"context/{session}/{info.first_seq}-{info.last_seq}/{budget}/{policy}/{memory.changes}"
    try:
        cached: dict[str, Any] = json.loads((await pool.get(key)).value)
        return cached
    except NotFound:
        pass
    result = await assemble(ctx.daemon.lifecycle, session, budget, policy, memory, _progress(ctx, args))
    with contextlib.suppress(TokaError):  # larger than the pool holds: nothing to keep
        await pool.put(key, json.dumps(result, separators=(",", ":")).encode(), ttl=CONTEXT_TTL_S)
    await asyncio.sleep(0)
    return result


@op("blobs.get")
async def blobs_get(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    digest, payload = await ctx.daemon.store.payload(_required(args, "digest", str))
    return {"digest": digest, "payload": payload}
