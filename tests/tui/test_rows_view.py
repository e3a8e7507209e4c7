"""The timeline's table: rows in sight drawn, the cursor kept in sight, j/k and enter."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult
from tui_driver import screen_text

from toka_cli.tui.rows_view import RowsView


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.heard: list[str] = []

    def compose(self) -> ComposeResult:
        yield RowsView(("n", "text"), id="view")

    def on_rows_view_highlighted(self, message: RowsView.Highlighted) -> None:
        self.heard.append(message.key)

    def on_rows_view_selected(self, message: RowsView.Selected) -> None:
        self.heard.append(f"selected {message.key}")


def test_a_long_list_shows_the_rows_at_its_cursor_and_follows_it() -> None:
    async def play() -> None:
        app = Host()
        async with app.run_test(size=(40, 10)) as pilot:
            view = app.query_one(RowsView)
            view.set_rows([(str(n), (str(n), f"row {n}")) for n in range(100_000)])
            view.focus()
            view.move_cursor(99_999)
            await pilot.pause()
            text = screen_text(app)
            assert "row 99999" in text and "row 5 " not in text
            assert text.splitlines()[0].split() == ["n", "text"]  # the header stays on top
            await pilot.press("k", "k", "j")
            assert view.cursor_row == 99_998 and app.heard[-1] == "99998"
            await pilot.press("enter")
            await pilot.pause()
            assert app.heard[-1] == "selected 99998"
            view.add_row("100000", "row 100000", key="100000")
            assert view.row_count == 100_001 and view.get_row_index("100000") == 100_000

    asyncio.run(play())
