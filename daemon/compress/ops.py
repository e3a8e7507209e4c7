"""The ``compress`` and ``context`` operations (docs/protocol.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from daemon.compress.context import ContextAssembler
from daemon.compress.service import Compress, Compressor
from daemon.compress.settings import CompressionSettings
from daemon.rpc.registry import Call, Ops
from store.errors import UsageError

COMPRESS = Ops(Compressor)
CONTEXT = Ops(ContextAssembler)

# A context's budget when the request names none: a 200k window less what the model answers.
DEFAULT_BUDGET = 100_000


@dataclass(frozen=True, slots=True)
class CompressRequest:
    agent: str | None = None
    session: str | None = None
    policy: str | None = None
    target_pct: float | None = None
    dry_run: bool = False
    force: bool = False


@COMPRESS.op("compress", CompressRequest, progress=True)
async def compress_op(compressor: Compressor, request: CompressRequest, call: Call) -> dict[str, Any]:
    """Compress a session (its main agent's, or the agent's own), or say what would be done."""
    settings = compressor.core.settings
    target = request.agent or request.session
    if target is None:
        raise UsageError("argument 'session' is required")
    agent = await compressor.directory.refs.agent(target)
    compress = Compress(
        policy=request.policy or settings[CompressionSettings].policy,
        target_pct=float(request.target_pct or settings[CompressionSettings].target_pct),
        dry_run=request.dry_run,
        force=request.force,
    )
    result = await compressor.run(agent, compress, call.progress)
    await call.progress_sent()
    return result


@dataclass(frozen=True, slots=True)
class ContextRequest:
    session: str  # a session (its main agent) or an agent
    budget: int = DEFAULT_BUDGET
    policy: str | None = None
    raw: bool = False  # the texts as recorded, not redacted


@CONTEXT.op("context", ContextRequest, progress=True)
async def context_op(assembler: ContextAssembler, request: ContextRequest, call: Call) -> dict[str, Any]:
    """The working context of an agent (a session names its main agent), fitted to the budget."""
    agent = await assembler.refs.agent(request.session)
    result = await assembler.context(agent, request.budget, request.policy, call.progress, raw=request.raw)
    await call.progress_sent()
    return result
