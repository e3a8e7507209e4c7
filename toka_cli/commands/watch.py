"""`toka watch`: ingest transcripts in the foreground as they are written."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from toka_cli.commands.transfer import FORMAT_CHOICES, FORMAT_HELP
from toka_cli.output import console, note, print_json_line
from toka_cli.render import short_path, top

if TYPE_CHECKING:
    from daemon.ingest.watch import Ingested


def watch(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Files, or folders searched for *.jsonl; [watch] paths from the config when left out."),
    ] = None,
    format_: Annotated[str, typer.Option("--format", help=FORMAT_HELP, autocompletion=FORMAT_CHOICES)] = "auto",
    json_: Annotated[
        bool, typer.Option("--json", help="Print each new event as a JSON object per line (shape in docs/json.md).")
    ] = False,
) -> None:
    """Ingest transcripts as they are written, until Ctrl-C.

    Reads what the files hold first, then every line added, within a fraction of a second.
    How far each file was read is kept, so a later watch (or the daemon's own, see
    [watch] paths) reads only what is new, and a line still being written waits until it is
    complete. Prints a line per file read, or with --json each event read ("created": false
    when the log held it already, stored by the daemon's own watcher or an import).
    """
    from daemon.client.sync import Client
    from daemon.client.watch import follow
    from daemon.config_file import load_settings
    from daemon.ingest.formats import FORMATS
    from daemon.ingest.settings import WatchSettings
    from daemon.ingest.tail import Cursors
    from daemon.ingest.watch import resolve_roots
    from daemon.paths import resolve_paths
    from daemon.sections import SECTIONS
    from store.errors import UsageError

    if format_ not in FORMATS:
        raise UsageError(f"unknown format {format_!r}", f"use one of: {', '.join(FORMATS)}")
    toka_paths = resolve_paths()
    if not paths:
        configured = load_settings(SECTIONS, toka_paths.config_file).settings[WatchSettings].paths
        if not configured:
            raise UsageError(
                "nothing to watch", "name files or folders, or set them: toka config set watch.paths ~/.claude/projects"
            )
        paths = [Path(p) for p in configured]
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    files: set[Path] = set()
    new_events = 0

    def report(done: Ingested) -> None:
        nonlocal new_events
        files.add(done.path)
        new_events += done.created
        if json_:
            for event in done.events:
                print_json_line(_event_json(done.path, event))
        elif done.events:
            console().print(_summary_line(done), highlight=False, markup=False)
        for bad in done.bad_lines:
            note(f"skipped {bad}")

    follow(Client, resolve_roots(paths), Cursors(toka_paths.cursors("cli")), report, stop, format_, toka_paths.data_dir)
    note(f"stopped: {new_events} new events from {len(files)} files")


def _event_json(path: Path, event: dict[str, Any]) -> dict[str, Any]:
    fields = ("seq", "id", "created", "session", "agent", "kind", "ts", "key", "payload")
    return {"path": str(path), **{name: event.get(name) for name in fields}}


def _summary_line(done: Ingested) -> str:
    count = len(done.events)
    sessions = done.sessions
    into = sessions[0] if len(sessions) == 1 else f"{len(sessions)} sessions"
    noun = "event" if count == 1 else "events"
    present = count - done.created
    already = f", {present} already in the log" if present else ""
    return f"{short_path(str(done.path), 48)}: +{count} {noun} into {into} ({top(done.kinds)}{already})"


def register(app: typer.Typer) -> None:
    app.command()(watch)
