"""`toka status`, `toka stats` and `toka verify`: the state and integrity of the log."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import typer

from store.errors import IntegrityError
from toka_cli.call import call_and_show
from toka_cli.options import JsonOpt, OptionalSessionArg
from toka_cli.output import console
from toka_cli.render import key_values, size, table

if TYPE_CHECKING:
    from daemon.client.results import ConnectionState, Stats, Status, VerifyReport


def status(json_: JsonOpt = False) -> None:
    """The daemon (starting it when needed) and the log: version, pid, database, counts."""
    call_and_show("status", json_, _status)


def _status(info: Status) -> None:
    rows: list[tuple[str, object]] = [
        (
            "daemon",
            f"toka {info['version']} (protocol {info['protocol']}), pid {info['pid']}, up {info['uptime_s']:.0f}s",
        ),
        ("database", f"{info['database']} (durability {info['durability']})"),
        ("socket", info["socket"]),
        ("events", info["events"]),
        ("sessions", info["sessions"]),
        ("clients", f"{info['clients']} connected, {info['subscribers']} following"),
    ]
    connection = info.get("connection")
    if connection is not None:
        rows.insert(2, ("connection", _connection(connection)))
    for agent in info.get("agents_at_risk", []):
        fill = "" if agent["fill_pct"] is None else f" at {agent['fill_pct']}%"
        rows.append((f"agent {agent['state']}", f"{agent['id']}{fill}: {agent['detail'] or '-'}"))
    watch = info.get("watch")
    if watch is not None:
        missing = f", missing: {', '.join(watch['missing'])}" if watch["missing"] else ""
        rows.append(("watch", f"{watch['files']} files, {watch['events']} events ingested{missing}"))
        if watch["last_error"]:
            rows.append(("watch error", watch["last_error"]))
    otel = info.get("otel")
    if otel is not None:
        if otel["listen"] is None:
            rows.append(("otel", f"not receiving: {otel['error']}"))
        else:
            received = f"{otel.get('log_records', 0)} log records, {otel.get('metric_points', 0)} metric points"
            rows.append(("otel", f"http://{otel['listen']}: {received}, {otel.get('refused', 0)} requests refused"))
    console().print(key_values(rows))


def _connection(state: ConnectionState) -> str:
    """The database server's connection (PostgreSQL): up, or away since when and why."""
    outages = f"{state['outages']} outage{'' if state['outages'] == 1 else 's'} since the daemon started"
    if state["reachable"]:
        return f"reachable ({outages})"
    since = time.strftime("%H:%M:%S", time.localtime(state["since"]))
    return f"UNREACHABLE since {since}: {state['error']} ({outages})"


def stats(json_: JsonOpt = False) -> None:
    """Storage figures: events, blobs, deduplication, size on disk."""
    call_and_show("stats", json_, _stats)


def _stats(info: Stats) -> None:
    rows = [
        ("events", info["events"]),
        ("sessions", info["sessions"]),
        ("blobs", f"{info['blobs']} distinct payloads"),
        (
            "payloads",
            f"{size(info['payload_bytes'])} as recorded, {size(info['blob_bytes'])} distinct,"
            f" {size(info['stored_bytes'])} stored",
        ),
        ("dedup ratio", f"{info['dedup_ratio']:.2f}x"),
        ("on disk", size(info["disk_bytes"])),
    ]
    console().print(key_values(rows))


def verify(session: OptionalSessionArg = None, json_: JsonOpt = False) -> None:
    """Recompute every payload digest and event id and check each chain.

    Exit code 5 names the first event that does not match.
    """
    report = call_and_show("verify", json_, _verified, progress_label="verifying", session=session or None)
    if not report["ok"]:
        first = report["problems"][0]
        raise IntegrityError(
            f"the log does not match its hashes: {report['problem_count']} problems, the first at seq {first['seq']}",
            "`toka verify --json` lists every problem",
        )


def _verified(report: VerifyReport) -> None:
    if report["ok"]:
        scope = f"session {report['session']}" if report["session"] else "the log"
        console().print(f"ok: {report['events']} events in {scope} match their hashes")
    else:
        first = report["problems"][0]
        console().print(
            f"FAILED: {report['problem_count']} problems; first at seq {first['seq']}"
            f" (event {first['id'][:12]}, session {first['session']}): {first['what']}: {first['detail']}",
            highlight=False,
        )
        grid = table("seq", "event", "session", "what", "detail")
        for p in report["problems"]:
            grid.add_row(str(p["seq"]), p["id"][:12], p["session"], p["what"], p["detail"])
        console().print(grid)


def register(app: typer.Typer) -> None:
    app.command()(status)
    app.command()(stats)
    app.command()(verify)
