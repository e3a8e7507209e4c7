"""The `toka` command: the app assembled from its command groups."""

from __future__ import annotations

from typing import Annotated

import typer

from daemon.version import VERSION
from toka_cli.base import make_app
from toka_cli.commands import (
    admin,
    agent,
    alerts,
    compress,
    config,
    daemon,
    deps,
    doctor,
    events,
    export,
    handoff,
    heads,
    hooks,
    inspect,
    mcp,
    memory,
    pool,
    report,
    retention,
    search,
    sessions,
    state,
    transfer,
    tui,
    usage,
    watch,
)
from toka_cli.render import use_utc

app = make_app(
    "Toka: a tamper-evident event log and context manager for AI agents.\n\n"
    "Exit codes: 0 ok, 1 failure, 2 usage or config error, 3 not found, 4 daemon unavailable, 5 integrity failure,"
    " 6 conflict (the current state does not allow it)."
)


def _show_version(value: bool) -> None:
    if value:
        print(f"toka {VERSION}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=_show_version, is_eager=True, help="Print toka's version and exit."),
    ] = False,
    utc: Annotated[bool, typer.Option("--utc", help="Show times in UTC instead of the local time zone.")] = False,
) -> None:
    use_utc(utc)


inspect.register(app)
heads.register(app)
sessions.register(app)
events.register(app)
transfer.register(app)
watch.register(app)
usage.register(app)
alerts.register(app)
hooks.register(app)
app.add_typer(agent.app)
app.add_typer(memory.app)
handoff.register(app)
compress.register(app)
state.register(app)
pool.register(app)
search.register(app)
retention.register(app)
doctor.register(app)
mcp.register(app)
tui.register(app)
deps.register(app)
app.add_typer(export.app)
app.add_typer(report.app)
app.add_typer(daemon.app)
app.add_typer(config.app)
app.add_typer(admin.app)


def main() -> None:
    app()
