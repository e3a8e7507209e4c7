"""Operations `toka doctor` asks the daemon: its clock, to compare with the client's, and the
facts about the database file."""

from __future__ import annotations

import asyncio
from typing import Any

from daemon.server.ops import Context, op
from store.events import format_ts, now_us
from store.health import inspect_database


@op("doctor.clock")
async def doctor_clock(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    """The daemon's wall clock, in microseconds and as ISO-8601."""
    now = now_us()
    return {"now_us": now, "now": format_ts(now)}


@op("doctor.database")
async def doctor_database(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    """SQLite's quick_check, the schema version and the newest event's time of the database
    file, read-only on a connection of its own (in a thread: quick_check reads every page)."""
    return (await asyncio.to_thread(inspect_database, ctx.daemon.paths.database)).to_json()
