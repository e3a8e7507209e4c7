"""Operations `toka doctor` asks the daemon: its clock, to compare with the client's, and the
facts about its database: the SQLite file, or the PostgreSQL database at ``store.url``."""

from __future__ import annotations

import asyncio
from typing import Any

from daemon.config import StoreSettings
from daemon.core import Core
from daemon.rpc.registry import Call, Ops
from daemon.rpc.requests import NoArgs
from store.events import format_ts, now_us
from store.sqlite.health import inspect_database

OPS = Ops(Core)


@OPS.op("doctor.clock", NoArgs)
async def doctor_clock(core: Core, request: NoArgs, call: Call) -> dict[str, Any]:
    """The daemon's wall clock, in microseconds and as ISO-8601."""
    now = now_us()
    return {"now_us": now, "now": format_ts(now)}


@OPS.op("doctor.database", NoArgs)
async def doctor_database(core: Core, request: NoArgs, call: Call) -> dict[str, Any]:
    """SQLite's quick_check, the schema version, the newest event's time, the damage recorded and
    the log against its recorded tip, of the database file, read-only on a connection of its own
    (in a thread: quick_check reads every page); a failed check marks the store damaged. On
    PostgreSQL the server's version, the schema steps and the role's rights, read the same way."""
    if core.settings[StoreSettings].backend == "postgres":
        from store.postgres.health import inspect_postgres

        return (await asyncio.to_thread(inspect_postgres, core.settings[StoreSettings].url)).to_json()
    await core.store.project()  # the file as it stands once every acknowledged append is applied, as stats reads it
    health = await asyncio.to_thread(inspect_database, core.paths.database)
    if health.quick_check != ("ok",):  # a failed check: the daemon takes no more writes
        core.store.mark_damaged(f"SQLite's quick_check failed: {'; '.join(health.quick_check[:3])}")
    elif health.tip_problem is not None:
        core.store.mark_damaged(health.tip_problem)
    return health.to_json()
