"""`toka import` and `toka export [jsonl]`: toka's own JSON-lines format."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toka_cli.call import connection
from toka_cli.completers import choices
from toka_cli.options import JsonOpt, SessionArg
from toka_cli.output import console, emit, note, print_json_line, progress

if TYPE_CHECKING:
    from daemon.contract.results import ImportReport

# Bad lines listed on stderr after an import; the JSON summary lists them all.
SHOW_BAD_LINES = 20
# Types of records kept raw named in the summary, the most frequent first; --json has them all.
SHOW_UNKNOWN_TYPES = 5


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


FORMAT_HELP = "auto (detected per file), toka, claude-code or codex."
# The formats of daemon/ingest/formats.py (tests/cli/test_completion.py holds them equal).
FORMAT_CHOICES = choices("auto", "toka", "claude-code", "codex")


def import_(
    paths: Annotated[list[Path], typer.Argument(help="Files, or folders searched for *.jsonl.")],
    format_: Annotated[str, typer.Option("--format", help=FORMAT_HELP, autocompletion=FORMAT_CHOICES)] = "auto",
    json_: JsonOpt = False,
    wait: Annotated[
        bool, typer.Option("--wait", help="Return once the events are in the search index and session tables too.")
    ] = False,
) -> None:
    """Import toka exports, Claude Code transcripts (with subagents) and Codex rollouts.

    Every event keeps a key from its source (or its id, for toka's own exports), so importing a
    file twice, or a file that has grown, adds only what is new. Records of types toka does not
    know are kept as `raw` events and counted. A file of no format toka reads (a Gemini CLI
    session, a JSON array) is refused whole, the others still imported. Bad lines are skipped
    and reported as file:line; the exit code is then 1.

    The import returns once the log holds its events; the daemon adds them to the search index
    and the session tables right behind (a search or a listing waits for what is left). With
    --wait it returns once they are there.
    """
    from daemon.client.transfer import import_files  # the importers load for import only

    with connection() as client, progress("importing", in_bytes=True) as update:
        summary = import_files(client, paths, format_, update, wait)
    report = emit(summary.to_json(), json_, _imported)
    if report["bad_lines"]:
        # Each was named on stderr (or is in the document), so no error line repeats them.
        raise typer.Exit(1)


def _imported(report: ImportReport) -> None:
    console().print(
        f"imported {report['created']} new events ({report['existing']} already present)"
        f" into {_count(len(report['sessions']), 'session')} from {_count(report['files'], 'file')}"
    )
    if report["files"] == 0:
        note(
            "no *.jsonl file in the folders given: Claude Code keeps its transcripts in ~/.claude/projects,"
            " Codex its rollouts in ~/.codex/sessions"
        )
    # Said of what this import kept: a second import of the same files keeps nothing new.
    unknown = sorted(report["unknown_types_created"].items(), key=lambda item: -item[1])
    if unknown:
        shown = ", ".join(f"{name} {count}" for name, count in unknown[:SHOW_UNKNOWN_TYPES])
        if len(unknown) > SHOW_UNKNOWN_TYPES:
            shown += f", +{len(unknown) - SHOW_UNKNOWN_TYPES} more (see --json)"
        note(f"kept {sum(n for _, n in unknown)} records of types toka does not know as raw events ({shown})")
    bad_lines = report["bad_lines"]
    for bad in bad_lines[:SHOW_BAD_LINES]:
        note(f"skipped {bad['path']}:{bad['line']}: {bad['reason']}")
    if len(bad_lines) > SHOW_BAD_LINES:
        note(f"... and {len(bad_lines) - SHOW_BAD_LINES} more bad lines (see --json)")


def export(
    session: SessionArg,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")] = None,
) -> None:
    """Export a session as JSON lines, one event per line (the shape of docs/json.md)."""
    import json

    with connection() as client:
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
    app.command("import")(import_)  # `export` is a group of its own (toka_cli/commands/export.py)
