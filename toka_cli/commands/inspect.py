"""`toka status`, `toka stats` and `toka verify`: the state and integrity of the log."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

import typer

from store.errors import IntegrityError
from toka_cli.call import call_and_show
from toka_cli.commands import heads
from toka_cli.commands.heads import SinceHeadOpt
from toka_cli.options import JsonOpt, OptionalSessionArg
from toka_cli.output import console, print_view
from toka_cli.render import key_values, size, table
from toka_cli.watch_views import watch_rows

if TYPE_CHECKING:
    from daemon.contract.results import (
        ConnectionState,
        ExportStatus,
        HeadsStatus,
        Stats,
        Status,
        VerifyProblem,
        VerifyReport,
    )


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
    damaged = info.get("damaged")
    if damaged is not None:
        line = f"DAMAGED since {damaged['since']}: {damaged['reason']}; takes no writes (toka admin recover)"
        rows.insert(2, ("integrity", line))
    skipped = info.get("projections")
    if skipped is not None and skipped["skipped"]:
        last = skipped["recent"][-1]
        events = f"{skipped['skipped']} event{'' if skipped['skipped'] == 1 else 's'} not applied"
        line = f"{events}, the last seq {last['seq']} ({last['kind']}): {last['reason']}; see toka daemon logs"
        rows.insert(2, ("skipped", line))
    for agent in info.get("agents_at_risk", []):
        fill = "" if agent["fill_pct"] is None else f" at {agent['fill_pct']}%"
        rows.append((f"agent {agent['state']}", f"{agent['id']}{fill}: {agent['detail'] or '-'}"))
    watch = info.get("watch")
    if watch is not None:
        missing = f", missing: {', '.join(watch['missing'])}" if watch["missing"] else ""
        rows.append(("watch", f"{watch['files']} files, {watch['events']} events ingested{missing}"))
        rows += watch_rows(watch)
        if watch["last_error"]:
            rows.append(("watch error", watch["last_error"]))
    heads = info.get("heads")
    if heads is not None:
        rows += heads_rows(heads)
    otel = info.get("otel")
    if otel is not None:
        if otel["listen"] is None:
            rows.append(("otel", f"not receiving: {otel['error']}"))
        else:
            received = f"{otel.get('log_records', 0)} log records, {otel.get('metric_points', 0)} metric points"
            rows.append(("otel", f"http://{otel['listen']}: {received}, {otel.get('refused', 0)} requests refused"))
    export = info.get("export")
    if export is not None:
        rows.append(("export", export_line(export)))
    print_view(key_values(rows))


def heads_rows(heads: HeadsStatus) -> list[tuple[str, object]]:
    """The signed heads in `status`: the latest, and what is wrong with them."""
    rows: list[tuple[str, object]] = []
    if heads.get("refused"):
        rows.append(("signing", f"REFUSED: {heads['refused']} (toka verify; toka heads --reset --yes)"))
    if heads["size"] is not None:
        witness = f"; the witness failed {heads['witness_failures']} times" if heads["witness_failures"] else ""
        rows.append(("signed head", f"{heads['size']} events, signed {heads['signed_at']}{witness}"))
    if heads.get("untrusted"):
        rows.append(("heads file", f"{heads['untrusted']} lines after the last good head are not signed by this key"))
    return rows


def export_line(export: ExportStatus) -> str:
    """The forwarder, in one line: where it sends, how far behind it is, what it could not send."""
    if export["error"]:
        return f"not forwarding: {export['error']}"
    line = (
        f"{export['endpoint']}: {export['state']}, {export['sent_spans']} spans sent, {export['behind']} events behind"
    )
    if export["dropped_spans"]:
        line += f", {export['dropped_spans']} spans refused by the collector"
    if export["last_error"]:
        line += f"; {export['last_error']}"
    return line


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
        ("blobs", f"{info['blobs']} payloads stored"),
        (
            "payloads",
            f"{size(info['payload_bytes'])} as recorded, {size(info['blob_bytes'])} kept,"
            f" {size(info['stored_bytes'])} stored",
        ),
        ("dedup ratio", f"{info['dedup_ratio']:.2f}x"),
        ("on disk", size(info["disk_bytes"])),
    ]
    print_view(key_values(rows))


DeepOpt = Annotated[
    bool,
    typer.Option(
        "--deep",
        help="Run SQLite's integrity_check (every index against its table) instead of its quick_check;"
        " with SESSION, run the database's checks at all.",
    ),
]


def verify(
    session: OptionalSessionArg = None, deep: DeepOpt = False, since_head: SinceHeadOpt = None, json_: JsonOpt = False
) -> None:
    """Recompute every payload digest and event id and check each chain; for the whole log, also
    run SQLite's own check of the file, check that the log still holds its last committed event,
    and check it against its signed tree heads (docs/tamper-evidence.md).

    Exit code 5 names the first problem: an event changed, re-sealed, deleted, or cut off the end
    of the log. A damaged database takes no more writes: `toka admin recover`.
    """
    if since_head is not None:
        return heads.since_head(since_head, json_)
    report = call_and_show(
        "verify", json_, _verified, progress_label="verifying", session=session or None, deep=deep or None
    )
    if not report["ok"]:
        first = report["problems"][0]
        found, recover = _found(report)
        raise IntegrityError(
            f"the log {found}: {_problems(report['problem_count'])}, the first {_where(first)}",
            "`toka verify --json` lists every problem"
            + ("; `toka admin recover` saves what can be read" if recover else ""),
        )


# Problems of the chain's hashes; the others are of the database file or its recorded tip
# (listed first when there are any), or of the check against the signed tree heads.
HASH_PROBLEMS = ("id", "digest", "payload", "chain", "head")


def _found(report: VerifyReport) -> tuple[str, bool]:
    """What the first problem says of the log, and whether `toka admin recover` is the way out."""
    database = report.get("database")
    if database is not None and not database["ok"]:
        return "is damaged or lost events", True
    if report["problems"][0]["what"] in HASH_PROBLEMS:
        return "does not match its hashes", False
    what = report["problems"][0]["what"]
    if database is None and what in ("missing", "replaced", "database"):  # PostgreSQL's dense seqs and their end
        return ("lost the record of its end" if what == "database" else "lost events"), False
    return "does not match its signed heads", False


def _problems(count: int) -> str:
    return "1 problem" if count == 1 else f"{count} problems"


def _where(problem: VerifyProblem) -> str:
    if problem["seq"] == 0:  # of the database file, not of an event
        return "in the database file"
    return f"at seq {problem['seq']}"


def _verified(report: VerifyReport) -> None:
    database = report.get("database")
    checked = "" if database is None else f"; the database passes SQLite's {database['check']}"
    if report["ok"]:
        scope = f"session {report['session']}" if report["session"] else "the log"
        console().print(f"ok: {report['events']} events in {scope} match their hashes{checked}")
        signed = report.get("heads")
        if signed is not None and signed["latest"] is not None:
            heads = f"{signed['valid']} signed head{'s' if signed['valid'] != 1 else ''}"
            console().print(
                f"ok: the log matches its {heads}, the latest of"
                f" {signed['latest']['time']} covering {signed['covered']} events"
                + (f" ({signed['unsigned']} since)" if signed["unsigned"] else ""),
                highlight=False,
            )
        elif signed is not None and not report["session"]:
            console().print(
                "no signed head yet: the daemon signs one within store.head_interval_ms of a commit, and at a clean"
                " stop (`toka heads`)",
                highlight=False,
            )
    else:
        first = report["problems"][0]
        event = f" (event {first['id'][:12]}, session {first['session']})" if first["id"] and first["session"] else ""
        found = first["detail"] if first["seq"] == 0 else f"{first['what']}: {first['detail']}"
        console().print(
            f"FAILED: {_problems(report['problem_count'])}; first {_where(first)}{event}: {found}", highlight=False
        )
        for refused in (p for p in report["problems"] if p["what"] == "refused"):
            console().print(refused["detail"], highlight=False)
        grid = table("seq", "event", "session", "what", "detail")
        for p in report["problems"]:
            grid.add_row(str(p["seq"]), p["id"][:12], p["session"], p["what"], p["detail"])
        print_view(grid)


def register(app: typer.Typer) -> None:
    app.command()(status)
    app.command()(stats)
    app.command()(verify)
