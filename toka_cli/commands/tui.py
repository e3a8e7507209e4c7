"""`toka tui`: the dashboard. Textual is imported inside the command, so no other command loads it."""

from __future__ import annotations

import typer


def tui() -> None:
    """A live dashboard of agents, sessions, handoffs, search and memory (docs/tui.md)."""
    from toka_cli.tui.app import TokaApp

    TokaApp().run()


def register(app: typer.Typer) -> None:
    app.command()(tui)
