"""`toka daemon ...`: start, stop, restart, status, run in the foreground, read its log."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated

import typer

from daemon.autostart import start_daemon
from daemon.client import Client, probe
from daemon.paths import resolve_paths
from store.errors import DaemonUnavailable
from toka_cli.base import make_app
from toka_cli.options import JsonOpt
from toka_cli.output import console, note, print_json
from toka_cli.render import key_values

app = make_app("Start, stop and inspect the background daemon.", name="daemon")

# How long `stop` waits for the daemon's process to be gone after it acknowledged.
STOP_WAIT_S = 15.0


def _pid_alive(pid: int) -> bool:
    """Whether the process runs. An exited one that nobody reaped yet (a zombie) does not: it
    answers kill(pid, 0) until its parent reaps it, which is this process for a daemon it
    autostarted, and PID 1 otherwise, which in many containers reaps late or never."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass  # not our child
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False  # no /proc (macOS): kill(pid, 0) has to do
    return stat.rsplit(")", 1)[-1].split()[:1] == ["Z"]


def _stop() -> int | None:
    """Ask the daemon to stop and wait until its process is gone; None when none was running."""
    paths = resolve_paths()
    if probe(paths).state == "unreachable":
        return None
    with Client(paths, autostart=False) as client:
        pid = int(client.call("shutdown")["pid"])
    deadline = time.monotonic() + STOP_WAIT_S
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    if _pid_alive(pid):
        raise DaemonUnavailable(f"the daemon (pid {pid}) did not stop within {STOP_WAIT_S:g}s", f"kill {pid}")
    return pid


def _show_state(as_json: bool) -> None:
    state = probe()
    if as_json:
        print_json({"state": state.state, "detail": state.detail, "server": state.server})
    else:
        console().print(f"{state.state}: {state.detail}", highlight=False)


@app.command()
def start(json_: JsonOpt = False) -> None:
    """Start the daemon in the background (nothing to do when it runs already)."""
    start_daemon(resolve_paths())
    _show_state(json_)


@app.command()
def stop(json_: JsonOpt = False) -> None:
    """Stop the daemon: it finishes in-flight requests, checkpoints and removes its socket."""
    pid = _stop()
    if json_:
        print_json({"stopped": pid is not None, "pid": pid})
    elif pid is None:
        note("the daemon was not running")
    else:
        console().print(f"stopped the daemon (pid {pid})")


@app.command()
def restart(json_: JsonOpt = False) -> None:
    """Stop the daemon if it runs, then start it (after upgrading toka, say)."""
    _stop()
    start_daemon(resolve_paths())
    _show_state(json_)


@app.command()
def status(json_: JsonOpt = False) -> None:
    """Whether the daemon answers, and whether it is this toka's version. Never starts it.

    Exit code 0 when it runs, 1 when it needs a restart, 4 when it is unreachable.
    """
    state = probe()
    if json_:
        print_json({"state": state.state, "detail": state.detail, "server": state.server})
    else:
        rows = [("state", state.state), ("detail", state.detail), ("socket", resolve_paths().socket)]
        console().print(key_values(rows))
    raise typer.Exit({"running": 0, "needs_restart": 1, "unreachable": 4}[state.state])


@app.command()
def run(
    memory: Annotated[bool, typer.Option("--memory", help="Keep events in memory only.")] = False,
    durability: Annotated[
        str | None, typer.Option(help="normal or full (fsync every commit); overrides the config.")
    ] = None,
) -> None:
    """Run the daemon in the foreground (for systemd, containers, debugging). Logs go to stderr."""
    from daemon.server import run_foreground

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
    with path.open("r", errors="replace") as handle:
        for line in handle.readlines()[-lines:]:
            typer.echo(line.rstrip("\n"))
        while follow:
            line = handle.readline()
            if line:
                typer.echo(line.rstrip("\n"))
            else:
                time.sleep(0.2)
