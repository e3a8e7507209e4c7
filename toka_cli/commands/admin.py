"""`toka admin ...`: maintenance of the store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from daemon.paths import resolve_paths
from store.errors import IntegrityError
from toka_cli.base import make_app
from toka_cli.call import call_and_show
from toka_cli.options import JsonOpt
from toka_cli.output import console, emit, print_view
from toka_cli.render import key_values

if TYPE_CHECKING:
    from daemon.contract.results import CopyReport, Recovery, RecoveryLost

app = make_app(
    "Maintenance: rebuild the query tables from the log, copy the log into PostgreSQL, recover a damaged database.",
    name="admin",
)


@app.command()
def rebuild(json_: JsonOpt = False) -> None:
    """Recreate the session tables (projections), the search index and the vectors of semantic recall from the
    events themselves (the vectors in the background: `toka doctor` shows how far they are)."""
    call_and_show("admin.rebuild", json_, _rebuilt)


def _rebuilt(result: dict[str, Any]) -> None:
    console().print(
        f"rebuilt the projections of {result['sessions']} sessions and the search index"
        f" ({result['search_events']} events) from the log"
        + (f"; re-embedding {result['embed_events']} events in the background" if result.get("embed_events") else "")
    )


ToOpt = Annotated[
    str,
    typer.Option(
        "--to",
        metavar="URL",
        help="The PostgreSQL database to copy into, e.g. postgresql://toka@db.internal/toka"
        " (the daemon connects: keep a password in its user's ~/.pgpass).",
    ),
]


@app.command("copy")
def copy_log(to: ToOpt, json_: JsonOpt = False) -> None:
    """Copy the log into a PostgreSQL database with the same event ids, then verify it there.

    The target must be empty or a toka database. Run it again to resume a copy that stopped, or
    to bring the target up to date: what the target holds already is skipped. Exit code 4 when
    the target cannot be reached, 5 when the copy does not verify there.
    """
    report: CopyReport = call_and_show("admin.copy", json_, _copied, progress_label="copying, then verifying", to=to)
    verified, mismatched = report["verify"], report["mismatched"]
    if mismatched or not verified["ok"]:
        found = [f"{mismatched} events got other ids there"] if mismatched else []
        if not verified["ok"]:
            found.append(f"verify found {verified['problem_count']} problems there")
        raise IntegrityError(
            f"the copy in {report['target']} does not match the log: {', and '.join(found)}",
            "`toka admin copy --json` lists the problems verify found",
        )


def _copied(report: CopyReport) -> None:
    seconds = report["seconds"]
    rate = f", {report['events'] / seconds:,.0f} events/s" if seconds > 0 else ""
    console().print(
        f"copied {report['copied']:,} events into {report['target']}, {report['present']:,} already there"
        f" ({report['events']:,} events of {report['sessions']:,} sessions in {seconds:.1f} s{rate})",
        highlight=False,
    )
    if report["mismatched"]:
        console().print(
            f"{report['mismatched']:,} events got other ids there: their idempotency keys belong to other events",
            highlight=False,
        )
    verified = report["verify"]
    if verified["ok"]:
        console().print(f"verified: the {verified['events']:,} events there match their hashes", highlight=False)
        return
    first = verified["problems"][0]
    console().print(
        f"FAILED verify there: {verified['problem_count']} problems; first at seq {first['seq']}"
        f" (event {first['id'][:12]}, session {first['session']}): {first['what']}: {first['detail']}",
        highlight=False,
    )


@app.command()
def recover(json_: JsonOpt = False) -> None:
    """Save what can be read of a damaged database into a new one, and keep the damaged one.

    Stops the daemon, reads the database row by row (and through the sqlite3 shell's .recover
    when it is installed and rows did not read), writes what it read into a new toka.db with
    the sessions and the search index rebuilt, renames the damaged files to
    toka.db.damaged-TIME, and reports what was saved and what was lost. The next command starts
    the daemon on the new database. Exit code 0 when every event was saved, 5 when some were lost.
    """
    from daemon.client.recover import recover_database

    report = emit(recover_database(resolve_paths()), json_, _recovered)
    lost = report["lost"]["events"]
    if lost:
        raise IntegrityError(
            f"{lost} events of the damaged log could not be saved (the rest are in {report['database']})",
            f"the damaged files are kept as {report['kept_as']}; `toka verify` names the holes left in the log",
        )


def _recovered(report: Recovery) -> None:
    saved, lost = report["saved"], report["lost"]
    rows = [
        ("database", f"{report['database']}, new: {saved['events']:,} events of {report['sessions']:,} sessions"),
        ("kept", f"the damaged files as {report['kept_as']}"),
        ("saved", f"{saved['events']:,} events, {saved['payloads']:,} payloads, {saved['tombstones']:,} tombstones"),
        ("lost", _lost(lost) if lost["events"] else f"nothing of the {report['last_seq']:,} seqs the log had reached"),
        ("read by", ", ".join(report["methods"])),
        ("check", f"SQLite's integrity_check of the new database: {'; '.join(report['integrity_check'][:3])}"),
    ]
    if report["stopped"] is not None:
        rows.insert(0, ("daemon", f"stopped (pid {report['stopped']}); the next toka command starts it"))
    rows += [("note", note) for note in report["notes"]]
    print_view(key_values(rows), highlight=False)


def _lost(lost: RecoveryLost) -> str:
    runs = ", ".join(f"{first}" if first == last else f"{first}-{last}" for first, last in lost["seqs"])
    more = ", ..." if len(lost["seqs"]) == 100 else ""
    without = (
        f"; {lost['events_without_payload']:,} of them read without their payload"
        if lost["events_without_payload"]
        else ""
    )
    return f"{lost['events']:,} events: seqs {runs}{more}{without}"
