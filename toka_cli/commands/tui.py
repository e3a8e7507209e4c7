"""`toka tui`: the dashboard. Textual is imported inside the command, so no other command loads it."""

from __future__ import annotations

import typer


def tui() -> None:
    """A live dashboard of agents, sessions, handoffs, search and memory (docs/tui.md)."""
    from toka_cli.history import wait_for_history
    from toka_cli.tui.app import TokaApp

    wait_for_history()  # before the screen is taken: its bar shows on the terminal
    TokaApp().run()


def register(app: typer.Typer) -> None:
    app.command()(tui)
