"""Driving the dashboard in tests: the app under the pilot, waits with a deadline, the screen as text."""

from __future__ import annotations

import asyncio
import html
import re
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import DataTable

from daemon.client.sync import Client
from daemon.client.transfer import import_files
from toka_cli.tui.app import TokaApp
from toka_cli.tui.rows_view import RowsView

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "session.jsonl"
EXAMPLE_SESSION = "fix-login-timeout"
# How long a test waits for what takes milliseconds when all is well.
PATIENCE = 15.0

Scenario = Callable[[Pilot[None]], Awaitable[None]]


def import_example(client: Client) -> None:
    import_files(client, [EXAMPLE])


def drive(scenario: Scenario, size: tuple[int, int] = (100, 30), clock: Callable[[], datetime] | None = None) -> None:
    """Run the app against the test's daemon and play ``scenario`` with the pilot."""

    async def play() -> None:
        app = TokaApp(clock=clock)
        async with app.run_test(size=size) as pilot:
            await scenario(pilot)

    asyncio.run(play())


async def wait_until(pilot: Pilot[None], done: Callable[[], Any], what: str) -> Any:
    """Let the app run until ``done()`` is truthy; fail after PATIENCE seconds, saying what was awaited."""
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        result = done()
        if result:
            return result
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting for {what}; the screen shows:\n{screen_text(pilot.app)}")


async def in_thread(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """A blocking client call, off the app's event loop (the daemon must answer both)."""
    return await asyncio.to_thread(call, *args, **kwargs)


def rows(pilot: Pilot[None], selector: str) -> list[str]:
    """The rows of a table on the current screen, each as its cells joined by ' | '."""
    table: DataTable[Any] | RowsView = pilot.app.screen.query_one(selector, DataTable | RowsView)
    return [" | ".join(str(cell) for cell in table.get_row_at(index)) for index in range(table.row_count)]


def screen_text(app: Any) -> str:
    """What the terminal shows, as plain text (from the SVG screenshot)."""
    svg = app.export_screenshot()
    rows: dict[float, list[tuple[float, str]]] = {}
    for x, y, content in re.findall(r'<text[^>]*?x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>', svg, flags=re.S):
        rows.setdefault(float(y), []).append((float(x), html.unescape(re.sub(r"<[^>]+>", "", content))))
    lines = ("".join(part for _, part in sorted(parts)) for _, parts in sorted(rows.items()))
    return "\n".join(lines).replace("\xa0", " ")
