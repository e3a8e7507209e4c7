"""Operations `toka doctor` asks the daemon: its clock, to compare with the client's."""

from __future__ import annotations

from typing import Any

from daemon.server.ops import Process
from daemon.server.registry import Call, Ops
from daemon.server.requests import NoArgs
from store.events import format_ts, now_us

OPS = Ops(Process)


@OPS.op("doctor.clock", NoArgs)
async def doctor_clock(process: Process, request: NoArgs, call: Call) -> dict[str, Any]:
    """The daemon's wall clock, in microseconds and as ISO-8601."""
    now = now_us()
    return {"now_us": now, "now": format_ts(now)}
