"""The client's side of `toka doctor`: what it asks the daemon, and reads itself when none runs.

Doctor never starts the daemon. The database facts come from the daemon (``doctor.database``)
when one of this toka answers, else from the database read here, read-only, by the same store
function the daemon calls (the SQLite file, or the PostgreSQL database of ``store.url`` when
the settings say ``store.backend = "postgres"``): the diagnosis matters most when the daemon
cannot start, and a daemon on PostgreSQL does not start while its database cannot be reached,
refuses its role or was written by a newer toka.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, cast

from daemon.client.sync import Client, probe
from daemon.paths import Paths
from store.errors import ConfigError, DaemonUnavailable, ProtocolError, UnsafePath

if TYPE_CHECKING:
    from daemon.contract.results import DatabaseHealth, ExportStatus, PostgresHealth, RecallStatus, Status

# quick_check reads every page: a large database takes a while, in the daemon as here.
DATABASE_CHECK_TIMEOUT_S = 300.0
# The clock is one small answer; a daemon slower than this has other problems, which the
# daemon check reports.
CLOCK_TIMEOUT_S = 5.0


def database_health(paths: Paths) -> DatabaseHealth | PostgresHealth:
    """quick_check, schema version and newest event of the database file, or the server, schema
    and rights of the PostgreSQL database (docs/protocol.md, ``doctor.database``)."""
    answer = _ask_daemon(paths)
    if answer is not None:
        return answer
    url = _postgres_url(paths)
    if url is not None:
        from store.postgres.health import inspect_postgres  # psycopg loads for doctor only

        return cast("PostgresHealth", inspect_postgres(url).to_json())
    from store.sqlite.health import inspect_database  # sqlite3 loads for doctor only

    return cast("DatabaseHealth", inspect_database(paths.database).to_json())


def _postgres_url(paths: Paths) -> str | None:
    """``store.url`` when the settings choose the PostgreSQL backend; None otherwise, and when
    they do not parse (the config check says why; the data dir's file is looked at meanwhile)."""
    from daemon.config import OWN_SECTIONS, StoreSettings
    from daemon.config_file import load_settings

    try:
        store = load_settings(OWN_SECTIONS, paths.config_file).settings[StoreSettings]
    except (ConfigError, UnsafePath):
        return None
    return store.url if store.backend == "postgres" else None


def _ask_daemon(paths: Paths) -> DatabaseHealth | PostgresHealth | None:
    """The daemon's answer, or None when no daemon of this toka answers (then the file is read
    here; a daemon of another version may not know the op)."""
    try:
        if probe(paths).state != "running":
            return None
        with Client(paths, autostart=False, timeout=DATABASE_CHECK_TIMEOUT_S) as client:
            return cast("DatabaseHealth | PostgresHealth", client.call("doctor.database"))
    except (DaemonUnavailable, ProtocolError):
        return None  # it stopped since the probe
    except UnsafePath:
        return None  # not the user's daemon: doctor's files and daemon checks say so


def clock_offset_us(paths: Paths) -> int:
    """How far the daemon's clock is ahead of this one (negative: behind), in microseconds,
    against the middle of the round trip. DaemonUnavailable when it cannot be asked."""
    with Client(paths, autostart=False, timeout=CLOCK_TIMEOUT_S) as client:
        before = _now_us()
        answer: dict[str, Any] = client.call("doctor.clock")
        after = _now_us()
    return int(answer["now_us"]) - (before + after) // 2


def _now_us() -> int:
    # store.events.now_us, without loading blake3 with it
    return time.time_ns() // 1000


# A report over every usage the log holds reads the usage projection, not the events: quick.
REPORT_TIMEOUT_S = 60.0


def unpriced_usage(paths: Paths) -> dict[str, Any]:
    """The totals of every usage the log holds (``report`` monthly, docs/cost.md): their
    ``unpriced_models`` and ``unpriced_calls`` say what toka saw and could not price.
    DaemonUnavailable when no daemon answers (doctor does not start one)."""
    with Client(paths, autostart=False, timeout=REPORT_TIMEOUT_S) as client:
        report: dict[str, Any] = client.call("report", kind="monthly")
    totals: dict[str, Any] = report["totals"]
    return totals


def export_status(paths: Paths) -> ExportStatus | None:
    """The forwarder's part of the daemon's ``status``; None when it is off. DaemonUnavailable
    when no daemon answers (doctor does not start one)."""
    with Client(paths, autostart=False, timeout=CLOCK_TIMEOUT_S) as client:
        status = cast("Status", client.call("status"))
    return status.get("export")


def recall_status(paths: Paths) -> RecallStatus:
    """Semantic recall as the daemon runs it (docs/recall.md). DaemonUnavailable when no daemon
    answers (doctor does not start one)."""
    with Client(paths, autostart=False, timeout=CLOCK_TIMEOUT_S) as client:
        return cast("RecallStatus", client.call("recall.status"))
