"""The ``admin.copy`` operation: the daemon's log copied into the PostgreSQL database at ``to``
(daemon/transfer/service.py, docs/postgres-copy.md). Handed the core: the log to read is its
store, and the target is opened for the copy and closed after it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from daemon.core import Core
from daemon.rpc.registry import Call, Ops
from daemon.rpc.requests import NonEmpty
from daemon.transfer.service import copy_log

OPS = Ops(Core)


@dataclass(frozen=True, slots=True)
class Copy:
    to: NonEmpty  # the target's URL


@OPS.op("admin.copy", Copy, progress=True)
async def admin_copy(core: Core, request: Copy, call: Call) -> dict[str, Any]:
    report = await copy_log(core.store, request.to, call.progress, call.closed)
    await call.progress_sent()
    return report.to_json()
