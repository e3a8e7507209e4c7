"""The daemon's own operations (docs/protocol.md): ``hello``, ``status`` and ``shutdown``. They
are handed the running process, as the :class:`Process` it shows them."""

from __future__ import annotations

import os
from typing import Any, Protocol

from daemon.config import DaemonSettings, Settings
from daemon.rpc.registry import Call, Ops
from daemon.rpc.requests import NoArgs
from daemon.version import PROTOCOL_VERSION, VERSION


class Process(Protocol):
    settings: Settings

    async def status(self) -> dict[str, Any]: ...

    def request_stop(self, reason: str) -> None: ...


OPS = Ops(Process)


@OPS.op("hello", NoArgs)
async def hello(process: Process, request: NoArgs, call: Call) -> dict[str, Any]:
    # The line limit too: clients cut their appends to fit it (daemon/client/appends.py).
    return {
        "version": VERSION,
        "protocol": PROTOCOL_VERSION,
        "pid": os.getpid(),
        "max_line_bytes": process.settings[DaemonSettings].max_line_bytes,
    }


@OPS.op("status", NoArgs)
async def status(process: Process, request: NoArgs, call: Call) -> dict[str, Any]:
    return await process.status()


@OPS.op("shutdown", NoArgs)
async def shutdown(process: Process, request: NoArgs, call: Call) -> dict[str, Any]:
    process.request_stop("shutdown requested by a client")
    return {"stopping": True, "pid": os.getpid()}
