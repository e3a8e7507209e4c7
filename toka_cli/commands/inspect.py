"""`toka status`, `toka stats` and `toka verify`: the state and integrity of the log."""

from __future__ import annotations

import typer

from daemon.client.sync import Client
from store.errors import IntegrityError
from toka_cli.options import JsonOpt, OptionalSessionArg
from toka_cli.output import console, print_json, progress
from toka_cli.render import key_values, size, table


def status(json_: JsonOpt = False) -> None:
    """The daemon (starting it when needed) and the log: version, pid, database, counts."""
    with Client() as client:
        info = client.call("status")
    if json_:
        print_json(info)
        return
    rows = [
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
    for agent in info.get("agents_at_risk", []):
        fill = "" if agent["fill_pct"] is None else f" at {agent['fill_pct']}%"
        rows.append((f"agent {agent['state']}", f"{agent['id']}{fill}: {agent['detail'] or '-'}"))
    watch = info.get("watch")
    if watch is not None:
        missing = f", missing: {', '.join(watch['missing'])}" if watch["missing"] else ""
        rows.append(("watch", f"{watch['files']} files, {watch['events']} events ingested{missing}"))
        if watch["last_error"]:
            rows.append(("watch error", watch["last_error"]))
    console().print(key_values(rows))


def stats(json_: JsonOpt = False) -> None:
    """Storage figures: events, blobs, deduplication, size on disk."""
    with Client() as client:
        info = client.call("stats")
    if json_:
        print_json(info)
        return
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
    args = {"session": session} if session else {}
    with Client() as client, progress("verifying") as update:
        report = client.call("verify", progress=update, **args)
    if json_:
        print_json(report)
    elif report["ok"]:
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
    if not report["ok"]:
        first = report["problems"][0]
        raise IntegrityError(
            f"the log does not match its hashes: {report['problem_count']} problems, the first at seq {first['seq']}",
            "`toka verify --json` lists every problem",
        )


def register(app: typer.Typer) -> None:
    app.command()(status)
    app.command()(stats)
    app.command()(verify)
