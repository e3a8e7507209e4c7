"""`toka daemon ...`: start, stop, restart, status, run in the foreground, read its log."""

from __future__ import annotations

import os
import time
from typing import Annotated, Any

import typer

from daemon.client.autostart import start_daemon
from daemon.client.stop import stop_daemon
from daemon.client.sync import probe
from daemon.ownership import open_private
from daemon.paths import resolve_paths
from store.errors import DaemonNeedsRestart, DaemonUnavailable
from toka_cli.base import make_app
from toka_cli.completers import choices
from toka_cli.options import JsonOpt
from toka_cli.output import console, emit, note, print_view
from toka_cli.render import key_values

app = make_app("Start, stop and inspect the background daemon.", name="daemon")


def _state() -> dict[str, Any]:
    """Whether the daemon answers, as `toka daemon status --json` prints it (docs/json.md)."""
    state = probe()
    return {"state": state.state, "detail": state.detail, "server": state.server}


def _state_line(state: dict[str, Any]) -> None:
    console().print(f"{state['state']}: {state['detail']}", highlight=False)


@app.command()
def start(json_: JsonOpt = False) -> None:
    """Start the daemon in the background (nothing to do when it runs already)."""
    start_daemon(resolve_paths())
    emit(_state(), json_, _state_line)


@app.command()
def stop(json_: JsonOpt = False) -> None:
    """Stop the daemon: it finishes in-flight requests, checkpoints and removes its socket."""
    pid = stop_daemon(resolve_paths())
    emit({"stopped": pid is not None, "pid": pid}, json_, _stopped)


def _stopped(result: dict[str, Any]) -> None:
    if result["stopped"]:
        console().print(f"stopped the daemon (pid {result['pid']})")
    else:
        note("the daemon was not running")


@app.command()
def restart(json_: JsonOpt = False) -> None:
    """Stop the daemon if it runs, then start it (after upgrading toka, say)."""
    stop_daemon(resolve_paths())
    start_daemon(resolve_paths())
    emit(_state(), json_, _state_line)


@app.command()
def status(json_: JsonOpt = False) -> None:
    """Whether the daemon answers, and whether it is this toka's version. Never starts it.

    Exit code 0 when it runs, 1 when it needs a restart, 4 when it is unreachable.
    """
    state = emit(_state(), json_, _state_rows)
    if state["state"] == "needs_restart":
        raise DaemonNeedsRestart(state["detail"])
    if state["state"] == "unreachable":
        raise DaemonUnavailable(state["detail"], "start it with `toka daemon start`, or see `toka doctor`")


def _state_rows(state: dict[str, Any]) -> None:
    rows = [("state", state["state"]), ("detail", state["detail"]), ("socket", resolve_paths().socket)]
    print_view(key_values(rows))


@app.command()
def run(
    memory: Annotated[bool, typer.Option("--memory", help="Keep events in memory only.")] = False,
    durability: Annotated[
        str | None,
        typer.Option(
            help="normal or full (fsync every commit); overrides the config.", autocompletion=choices("normal", "full")
        ),
    ] = None,
) -> None:
    """Run the daemon in the foreground (for systemd, containers, debugging). Logs go to stderr."""
    from daemon.server.main import run_foreground

    run_foreground({"backend": "memory" if memory else None, "durability": durability})


@app.command()
def logs(
    lines: Annotated[int, typer.Option("--lines", "-n", min=1, help="How many of the last lines.")] = 50,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing new lines.")] = False,
) -> None:
    """Print the end of the daemon's log (written when it runs in the background)."""
    path = resolve_paths().log_file
    if not path.exists():
        note(f"no log yet at {path}")
        return
    with open(open_private(path, os.O_RDONLY), errors="replace") as handle:
        for line in handle.readlines()[-lines:]:
            typer.echo(line.rstrip("\n"))
        while follow:
            line = handle.readline()
            if line:
                typer.echo(line.rstrip("\n"))
            else:
                time.sleep(0.2)
