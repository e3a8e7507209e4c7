"""The `toka` command: the app assembled from its command groups."""

from __future__ import annotations

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

app = make_app(
    "Toka: a tamper-evident event log and context manager for AI agents.\n\n"
    "Exit codes: 0 ok, 1 failure, 2 usage or config error, 3 not found, 4 daemon unavailable, 5 integrity failure,"
    " 6 conflict (the current state does not allow it)."
)
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
app.add_typer(report.app)
app.add_typer(daemon.app)
app.add_typer(config.app)
app.add_typer(admin.app)


def main() -> None:
    app()
