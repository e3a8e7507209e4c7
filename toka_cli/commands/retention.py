"""`toka prune` and `toka gc`: keep the log to a size (docs/retention.md)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from store.errors import UsageError
from toka_cli.call import call_and_show
from toka_cli.options import JsonOpt
from toka_cli.output import console, note, print_view
from toka_cli.render import short_ts, size, table, top, when

DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Say exactly what would go, and change nothing.")]


def prune(
    before: Annotated[
        str | None, typer.Option(help="Prune what is older than this: ISO-8601, or an age such as 90d.")
    ] = None,
    keep_days: Annotated[int | None, typer.Option(min=0, help="Prune what is older than this many days.")] = None,
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="Only this session (name or unique prefix).")
    ] = None,
    dry_run: DryRunOpt = False,
    json_: JsonOpt = False,
) -> None:
    """Replace each session's events older than a cut-off by one checkpoint event.

    What goes is the longest run of old events at the start of a session; the checkpoint
    that takes its place records how many events it replaced, their seqs, times and kinds, and
    the hash of their ids, so `toka verify` still passes and shows any change. Pruned events
    are not imported again. toka's own sessions, and sessions of a live spawned agent, are
    skipped. Payloads stay until `toka gc`.
    """
    if (before is None) == (keep_days is None):
        raise UsageError("give one of --before DATE or --keep-days N", "e.g. toka prune --keep-days 30 --dry-run")
    cutoff = when(before if before is not None else f"{keep_days}d", "--before")
    call_and_show(
        "log.prune", json_, _pruned, progress_label="pruning sessions", before=cutoff, session=session, dry_run=dry_run
    )


def _pruned(result: dict[str, Any]) -> None:
    dry_run = result["dry_run"]
    for skipped in result["skipped"]:
        note(f"skipped {skipped['session']}: {skipped['reason']}")
    verb = "would prune" if dry_run else "pruned"
    sessions = result["sessions"]
    if not sessions:
        console().print(f"nothing older than {short_ts(result['before'])} to prune")
        return
    grid = table("session", "events", "seqs", "from", "to", "kinds")
    for pruned in sessions:
        seqs = f"{pruned['first_seq']}–{pruned['last_seq']}"
        when_from, when_to = short_ts(pruned["first_ts"]), short_ts(pruned["last_ts"])
        grid.add_row(pruned["session"], str(pruned["events"]), seqs, when_from, when_to, top(pruned["kinds"]))
    print_view(grid)
    sessions_word = "session" if len(sessions) == 1 else "sessions"
    console().print(
        f"{verb} {result['events']} events in {len(sessions)} {sessions_word}, older than {short_ts(result['before'])}"
        + ("" if dry_run else "; `toka gc` frees their payloads")
    )


def gc(
    vacuum: Annotated[
        bool, typer.Option("--vacuum", help="Then rewrite the database file to give the space back.")
    ] = False,
    dry_run: DryRunOpt = False,
    json_: JsonOpt = False,
) -> None:
    """Delete the payloads no event refers to any more (after `toka prune`).

    Payloads a compression summary cites as [blob <digest> <size>] are kept. Freed space is
    reused by later writes; --vacuum rewrites the file so that it shrinks (it needs as much
    free disk as the database takes, and holds writes while it runs).
    """
    call_and_show("log.gc", json_, _collected, dry_run=dry_run, vacuum=vacuum)


def _collected(result: dict[str, Any]) -> None:
    verb = "would delete" if result["dry_run"] else "deleted"
    console().print(
        f"{verb} {result['blobs']} payloads ({size(result['bytes'])}, {size(result['stored_bytes'])} stored)"
        f"; kept {result['cited']} cited by compression summaries"
    )
    if result["vacuumed"]:
        console().print(
            f"database files: {size(result['disk_bytes_before'])} before, {size(result['disk_bytes_after'])} after"
        )


def register(app: typer.Typer) -> None:
    app.command()(prune)
    app.command()(gc)
