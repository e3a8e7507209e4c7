"""The dashboard's keys and chrome: one meaning per key on every screen, tabs that switch, j/k,
the command palette, raw records hidden until asked for, a replay in causal order, gists and
dates where events are listed."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from textual.binding import Binding
from textual.pilot import Pilot
from textual.widgets import DataTable, Input
from tui_driver import EXAMPLE_SESSION, drive, import_example, rows, screen_text, wait_until

from daemon.client.sync import Client
from toka_cli.tui.app import TokaApp
from toka_cli.tui.rows_view import RowsView
from toka_cli.tui.screens.cost import CostScreen
from toka_cli.tui.screens.handoffs import HandoffsScreen
from toka_cli.tui.screens.memory import MemoryScreen
from toka_cli.tui.screens.overview import OverviewScreen
from toka_cli.tui.screens.search import SearchScreen
from toka_cli.tui.screens.session import SessionScreen

SCREENS = (OverviewScreen, HandoffsScreen, SearchScreen, MemoryScreen, CostScreen, SessionScreen)


async def open_session(pilot: Pilot[None], session: str) -> None:
    pilot.app.open_session(session)  # type: ignore[attr-defined]
    await wait_until(pilot, lambda: pilot.app.screen.query("#timeline"), "the session screen")


def _bindings(owner: type) -> list[Binding]:
    return [b for b in owner.BINDINGS if isinstance(b, Binding)]


def test_a_key_means_one_thing_on_every_screen() -> None:
    meaning: dict[str, set[str]] = {}
    app_keys = {b.key for b in _bindings(TokaApp)}
    for screen in SCREENS:
        for binding in _bindings(screen):
            for key in binding.key.split(","):
                meaning.setdefault(key, set()).add(binding.action)
                assert key not in app_keys or binding.id == "search.query", (screen.__name__, key)
    assert {key: actions for key, actions in meaning.items() if len(actions) > 1} == {}


def test_the_tabs_name_the_screens_and_their_keys_switch(daemon: Any) -> None:
    async def scenario(pilot: Pilot[None]) -> None:
        text = await wait_until(pilot, lambda: "1 Overview" in (t := screen_text(pilot.app)) and t, "the tabs")
        for tab in ("2 Handoffs", "3 Search", "4 Memory", "5 Cost", "6 Session"):
            assert tab in text
        await pilot.press("2")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, HandoffsScreen), "the handoffs screen")
        await pilot.press("6")  # no session opened yet: it says so and stays
        assert isinstance(pilot.app.screen, HandoffsScreen)
        await pilot.press("1")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, OverviewScreen), "the overview")

    drive(scenario)


def test_j_and_k_move_through_a_list(daemon: Any) -> None:
    with daemon.client() as client:
        for n in range(3):
            client.record(f"session-{n}", "message", {"text": "hi"})

    async def scenario(pilot: Pilot[None]) -> None:
        await wait_until(pilot, lambda: len(rows(pilot, "#sessions")) == 3, "three sessions")
        table: DataTable[Any] = pilot.app.screen.query_one("#sessions", DataTable)
        table.focus()
        await pilot.press("j", "j")
        assert table.cursor_row == 2
        await pilot.press("k")
        assert table.cursor_row == 1

    drive(scenario)


def test_the_command_palette_offers_the_tabs_and_the_screens_actions(daemon: Any) -> None:
    async def scenario(pilot: Pilot[None]) -> None:
        titles = [command.title for command in pilot.app.get_system_commands(pilot.app.screen)]
        assert "Handoffs (2)" in titles and "Compress" in titles and "Pause/resume" in titles
        assert pilot.app.ENABLE_COMMAND_PALETTE

    drive(scenario)


def test_the_timeline_hides_raw_records_until_a(daemon: Any) -> None:
    with daemon.client() as client:
        events = [("message", {"role": "user", "text": "go"}), ("raw", {"type": "progress"})] * 3
        client.append([{"session": "with-raw", "agent": "main", "kind": k, "payload": p} for k, p in events])

    async def scenario(pilot: Pilot[None]) -> None:
        await open_session(pilot, "with-raw")
        shown = await wait_until(pilot, lambda: len(rows(pilot, "#timeline")) == 3 and rows(pilot, "#timeline"), "3")
        assert all("message" in row for row in shown)
        await pilot.press("a")
        shown = await wait_until(pilot, lambda: len(rows(pilot, "#timeline")) == 6 and rows(pilot, "#timeline"), "6")
        assert sum("raw progress" in row for row in shown) == 3

    drive(scenario)


def test_the_replay_shows_a_lifecycle_change_right_after_its_cause(daemon: Any) -> None:
    usage = {"model": "claude-sonnet-4-5", "input_tokens": 10, "cache_read_tokens": 160_000, "output_tokens": 40}
    events = [
        {"session": "causal", "agent": "main", "kind": "message", "payload": {"text": f"step {n}"}} for n in range(6)
    ]
    events[2] = {"session": "causal", "agent": "main", "kind": "usage", "payload": usage}
    with daemon.client() as client:
        stored = client.append(events)
        wait_until_lifecycle(client)

    async def scenario(pilot: Pilot[None]) -> None:
        await open_session(pilot, "causal")
        await wait_until(pilot, lambda: len(rows(pilot, "#timeline")) == 7, "the timeline")
        kinds = [row.split(" | ")[4] for row in rows(pilot, "#timeline")]
        assert kinds == ["message", "message", "usage", "lifecycle", "message", "message", "message"]
        table = pilot.app.screen.query_one("#timeline", RowsView)
        table.focus()
        table.move_cursor(row=2)  # the usage: the change it caused was appended after the batch
        await pilot.press("r")
        await wait_until(pilot, lambda: len(rows(pilot, "#timeline")) == 4, "the session up to the usage")
        assert "ACTIVE → WARNING 80%" in rows(pilot, "#timeline")[-1]
        await wait_until(
            pilot, lambda: f"replay at seq {stored[2]['seq']}" in screen_text(pilot.app), "the replay's title"
        )
        assert "event 3 of 7" in screen_text(pilot.app)

    drive(scenario)


def wait_until_lifecycle(client: Client) -> None:
    from daemons import wait_for

    wait_for(lambda: list(client.iter_events(session="causal", kinds=["lifecycle"])), "the WARNING")


def test_lists_show_gists_and_the_date_of_events_not_of_today(daemon: Any) -> None:
    with daemon.client() as client:
        import_example(client)  # 2026-03-14
        agent = client.call("agents.spawn", type="coder")["id"]
        client.call("agents.terminate", agent=agent)
    later = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)

    async def scenario(pilot: Pilot[None]) -> None:
        recent = await wait_until(pilot, lambda: rows(pilot, "#recent"), "the recent lifecycle")
        assert any("INITIALIZING → TERMINATED (MANUAL_TERMINATION)" in row for row in recent)
        assert not any("{" in row for row in recent)
        session = await wait_until(
            pilot, lambda: next((r for r in rows(pilot, "#sessions") if EXAMPLE_SESSION in r), None), "the session"
        )
        assert "2026-03-14 " in session

    drive(scenario, clock=lambda: later)


def test_in_the_search_box_digits_and_q_are_typed_and_escape_leaves_the_box(daemon: Any) -> None:
    with daemon.client() as client:
        client.record("s-2026", "message", {"role": "user", "text": "the 2026 release"})

    async def scenario(pilot: Pilot[None]) -> None:
        await pilot.press("3")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SearchScreen), "the search screen")
        await pilot.click("#query")
        await pilot.press(*"q 2026 1", "backspace", "backspace")
        box = pilot.app.screen.query_one("#query", Input)
        assert isinstance(pilot.app.screen, SearchScreen) and box.value == "q 2026"
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, SearchScreen) and not box.has_focus
        await pilot.press("1")  # out of the box, the digits switch screens again
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, OverviewScreen), "the overview")
        await pilot.press("3", "slash")
        await wait_until(pilot, lambda: box.has_focus, "the search box focused again")
        await pilot.press("ctrl+a", "ctrl+k", *"2026", "enter")
        hits = await wait_until(pilot, lambda: rows(pilot, "#hits"), "search hits")
        assert len(hits) == 1 and "s-2026" in hits[0]

    drive(scenario)
