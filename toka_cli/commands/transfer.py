"""`toka import` and `toka export`: toka's own JSON-lines format."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from daemon.client.sync import Client
from toka_cli.options import JsonOpt, SessionArg
from toka_cli.output import console, note, print_json, print_json_line, progress

# Bad lines listed on stderr after an import; the JSON summary lists them all.
SHOW_BAD_LINES = 20


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


FORMAT_HELP = "auto (detected per file), toka, claude-code or codex."


def import_(
    paths: Annotated[list[Path], typer.Argument(help="Files, or folders searched for *.jsonl.")],
    format_: Annotated[str, typer.Option("--format", "-f", help=FORMAT_HELP)] = "auto",
    json_: JsonOpt = False,
) -> None:
    """Import toka exports, Claude Code transcripts (with subagents) and Codex rollouts.

    Every event keeps a key from its source (or its id, for toka's own exports), so importing a
    file twice, or a file that has grown, adds only what is new. Records of types toka does not
    know are kept as `raw` events and counted. Bad lines are skipped and reported as file:line;
    the exit code is then 1.
    """
    from daemon.client.transfer import import_files  # the importers load for import only

    with Client() as client, progress("importing") as update:
        summary = import_files(client, paths, format_, update)
    if json_:
        print_json(summary.to_json())
    else:
        console().print(
            f"imported {summary.created} new events ({summary.existing} already present)"
            f" into {_count(len(summary.sessions), 'session')} from {_count(summary.files, 'file')}"
        )
        unknown = summary.stats.unknown_types
        if unknown:
            shown = ", ".join(f"{name} {count}" for name, count in unknown.most_common(5))
            note(f"kept {sum(unknown.values())} records of types toka does not know as raw events ({shown})")
        for bad in summary.bad_lines[:SHOW_BAD_LINES]:
            note(f"skipped {bad}")
        if len(summary.bad_lines) > SHOW_BAD_LINES:
            note(f"... and {len(summary.bad_lines) - SHOW_BAD_LINES} more bad lines (see --json)")
    if summary.bad_lines:
        raise typer.Exit(1)


def export(
    session: SessionArg,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")] = None,
) -> None:
    """Export a session as JSON lines, one event per line (the shape of docs/json.md)."""
    import json

    with Client() as client:
        if output is None:
            for event in client.iter_events(session=session):
                print_json_line(event)
            return
        tmp = output.with_name(output.name + ".tmp")
        try:
            with tmp.open("w", encoding="utf-8") as handle:
                count = 0
                for event in client.iter_events(session=session):
                    handle.write(json.dumps(event, separators=(",", ":"), ensure_ascii=False) + "\n")
                    count += 1
            tmp.replace(output)
        except BaseException:
            tmp.unlink(missing_ok=True)  # an unknown session or a lost daemon leaves no half file
            raise
    note(f"exported {count} events to {output}")


def register(app: typer.Typer) -> None:
    app.command("import")(import_)
    app.command()(export)
