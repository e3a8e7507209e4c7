"""`toka admin ...`: maintenance of the store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from store.errors import IntegrityError
from toka_cli.base import make_app
from toka_cli.call import call_and_show
from toka_cli.options import JsonOpt
from toka_cli.output import console

if TYPE_CHECKING:
    from daemon.client.results import CopyReport

app = make_app("Maintenance: rebuild the query tables from the log, copy the log into PostgreSQL.", name="admin")


@app.command()
def rebuild(json_: JsonOpt = False) -> None:
    """Recreate the session tables (projections) and the search index from the events themselves."""
    call_and_show("admin.rebuild", json_, _rebuilt)


def _rebuilt(result: dict[str, Any]) -> None:
    console().print(
        f"rebuilt the projections of {result['sessions']} sessions and the search index"
        f" ({result['search_events']} events) from the log"
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
