"""Operations `toka doctor` asks the daemon: its clock, to compare with the client's, and the
facts about the database file."""

from __future__ import annotations

import asyncio
from typing import Any

from daemon.core import Core
from daemon.server.registry import Call, Ops
from daemon.server.requests import NoArgs
from store.events import format_ts, now_us
from store.health import inspect_database

OPS = Ops(Core)


@OPS.op("doctor.clock", NoArgs)
async def doctor_clock(core: Core, request: NoArgs, call: Call) -> dict[str, Any]:
    """The daemon's wall clock, in microseconds and as ISO-8601."""
    now = now_us()
    return {"now_us": now, "now": format_ts(now)}


@OPS.op("doctor.database", NoArgs)
async def doctor_database(core: Core, request: NoArgs, call: Call) -> dict[str, Any]:
    """SQLite's quick_check, the schema version and the newest event's time of the database
    file, read-only on a connection of its own (in a thread: quick_check reads every page)."""
    return (await asyncio.to_thread(inspect_database, core.paths.database)).to_json()
