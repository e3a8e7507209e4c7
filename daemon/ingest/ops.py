"""The hook spool's operation (docs/protocol.md): ``spool.drain``, which a hook that got through
sends when it finds a spool, so that what hooks spooled meanwhile lands now rather than at the
next check."""

from __future__ import annotations

from typing import Any

from daemon.ingest.spool import SpoolDrain
from daemon.rpc.registry import Call, Ops
from daemon.rpc.requests import NoArgs

OPS = Ops(SpoolDrain)


@OPS.op("spool.drain", NoArgs)
async def spool_drain(spool: SpoolDrain, request: NoArgs, call: Call) -> dict[str, Any]:
    # Answered at once: the drain runs in the background, off the hook's path.
    return {"draining": spool.kick()}
