"""Operations `toka doctor` asks the daemon: its clock, to compare with the client's."""

from __future__ import annotations

from typing import Any

from daemon.server.ops import Context, op
from store.events import format_ts, now_us


@op("doctor.clock")
async def doctor_clock(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    """The daemon's wall clock, in microseconds and as ISO-8601."""
    now = now_us()
    return {"now_us": now, "now": format_ts(now)}
