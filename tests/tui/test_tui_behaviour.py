"""How the dashboard behaves: a daemon that goes away and comes back, 80×24, NO_COLOR, lazy import."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from textual.pilot import Pilot
from tui_driver import EXAMPLE_SESSION, ROOT, drive, import_example, rows, screen_text, wait_until

from toka_cli.tui.app import TokaApp
from toka_cli.tui.screens.session import SessionScreen
from toka_cli.tui.widgets import Banner


def test_a_daemon_that_goes_away_shows_a_banner_and_is_reconnected(spawn: Any) -> None:
    first = spawn()

    async def scenario(pilot: Pilot[None]) -> None:
        banner = pilot.app.screen.query_one(Banner)
        await wait_until(pilot, lambda: rows(pilot, "#agents") is not None and pilot.app.client, "the connection")  # type: ignore[attr-defined]
        first.stop()
        await wait_until(pilot, lambda: banner.display, "the banner")
        await wait_until(pilot, lambda: "daemon unreachable" in screen_text(pilot.app), "the banner on screen")
        second = spawn()
        await wait_until(pilot, lambda: not banner.display, "the banner to go")
        with second.client() as client:
            client.record("after-restart", "message", {"text": "back"})
        await wait_until(
            pilot, lambda: any(r.startswith("after-restart") for r in rows(pilot, "#sessions")), "live again"
        )

    drive(scenario)


def test_the_main_screens_fit_80_by_24(daemon: Any) -> None:
    with daemon.client() as client:
        import_example(client)
        client.call("agents.spawn", type="coder")

    async def scenario(pilot: Pilot[None]) -> None:
        shown = ("Agents", "Sessions", "Recent lifecycle", EXAMPLE_SESSION, "coder-", "INITIALIZING", "sessions 2")
        shown += ("pool 0% ok", "ev/s")

        # The lists and the status line fill in as their answers arrive, and reach the screen at
        # its next refresh: wait for all of it on screen.
        def overview() -> str | None:
            text = screen_text(pilot.app)
            return text if all(words in text for words in shown) else None

        text = await wait_until(pilot, overview, "the overview")
        lines = [line for line in text.splitlines() if line.strip()]
        assert tuple(pilot.app.size) == (80, 24)
        assert all(key in lines[-1] for key in ("? Help", "q Quit", "Terminate"))
        await pilot.app.push_screen(SessionScreen(EXAMPLE_SESSION))
        await wait_until(pilot, lambda: len(rows(pilot, "#timeline")) == 23, "the timeline")
        text = await wait_until(
            pilot, lambda: "Older" in (shown := screen_text(pilot.app)) and "23 events" in shown and shown, "title"
        )
        for words in ("seq", "kind", "gist", "tool.call", "Older", "Back"):
            assert words in text

    drive(scenario, size=(80, 24))


def test_no_color_turns_colour_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert TokaApp().no_color
    monkeypatch.delenv("NO_COLOR")
    assert not TokaApp().no_color


def test_toka_help_and_other_commands_never_import_textual() -> None:
    probe = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from toka_cli.main import app\n"
        "from toka_cli.commands import tui\n"
        "tui.register(app)\n"
        "runner = CliRunner()\n"
        "for args in (['--help'], ['tui', '--help'], ['sessions', '--help']):\n"
        "    assert runner.invoke(app, args).exit_code == 0, args\n"
        "print('textual' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def test_toka_tui_is_a_registered_command_that_loads_the_app_lazily() -> None:
    from typer.testing import CliRunner

    from toka_cli.base import make_app
    from toka_cli.commands import tui

    app = make_app("test")
    tui.register(app)
    app.command("noop")(lambda: None)
    result = CliRunner().invoke(app, ["tui", "--help"])
    assert result.exit_code == 0
    assert "dashboard" in result.output


def test_the_first_frame_imports_only_the_overview() -> None:
    probe = (
        "import sys\n"
        "import toka_cli.tui.app\n"
        "later = ('markdown_it', 'toka_cli.tui.screens.handoffs', 'toka_cli.tui.screens.session',\n"
        "         'toka_cli.tui.screens.search', 'toka_cli.tui.modals', 'rich.syntax')\n"
        "print([m for m in later if m in sys.modules])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
