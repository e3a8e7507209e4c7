"""Actions from the dashboard: confirmed changes reach the daemon, refusals show as a modal."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot
from textual.widgets import DataTable, Static
from tui_driver import EXAMPLE_SESSION, drive, import_example, rows, wait_until

from toka_cli.tui.modals import ConfirmScreen, ErrorScreen
from toka_cli.tui.screens.overview import OverviewScreen


async def _select_agent(pilot: Pilot[None], agent: str) -> None:
    await wait_until(pilot, lambda: any(agent in row for row in rows(pilot, "#agents")), f"agent {agent}")
    table: DataTable[Any] = pilot.app.screen.query_one("#agents", DataTable)
    table.focus()
    table.move_cursor(row=table.get_row_index(agent))


def test_pausing_an_agent_asks_first_then_pauses_it_in_the_daemon(daemon: Any) -> None:
    with daemon.client() as client:
        agent = client.call("agents.spawn", type="coder")["id"]

    async def scenario(pilot: Pilot[None]) -> None:
        await _select_agent(pilot, agent)
        await pilot.press("p")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen), "the confirmation")
        with daemon.client() as client:
            assert client.call("agents.get", agent=agent)["state"] != "PAUSED"
        await pilot.press("y")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, OverviewScreen), "the overview again")
        with daemon.client() as client:
            await wait_until(pilot, lambda: client.call("agents.get", agent=agent)["state"] == "PAUSED", "PAUSED")
        await wait_until(
            pilot, lambda: any("PAUSED" in row for row in rows(pilot, "#agents")), "the agent list to show PAUSED"
        )

    drive(scenario)


def test_declining_the_confirmation_changes_nothing(daemon: Any) -> None:
    with daemon.client() as client:
        agent = client.call("agents.spawn", type="coder")["id"]
        state = client.call("agents.get", agent=agent)["state"]

    async def scenario(pilot: Pilot[None]) -> None:
        await _select_agent(pilot, agent)
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen), "the confirmation")
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, OverviewScreen), "the overview again")
        with daemon.client() as client:
            assert client.call("agents.get", agent=agent)["state"] == state

    drive(scenario)


def test_terminating_a_terminated_agent_shows_the_error_in_a_modal(daemon: Any) -> None:
    with daemon.client() as client:
        agent = client.call("agents.spawn", type="coder")["id"]
        client.call("agents.terminate", agent=agent)

    async def scenario(pilot: Pilot[None]) -> None:
        await pilot.press("e")  # a terminated agent is listed with the ended ones
        await _select_agent(pilot, agent)
        await pilot.press("t", "y")
        error = await wait_until(
            pilot, lambda: isinstance(pilot.app.screen, ErrorScreen) and pilot.app.screen, "the error modal"
        )
        message = str(error.query_one("#error-message", Static).render())
        assert "TERMINATED" in message or "terminat" in message
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, OverviewScreen)

    drive(scenario)


def test_creating_a_handoff_from_the_overview_stores_one(daemon: Any) -> None:
    with daemon.client() as client:
        import_example(client)

    async def scenario(pilot: Pilot[None]) -> None:
        await wait_until(pilot, lambda: rows(pilot, "#sessions"), "the sessions")
        pilot.app.screen.query_one("#sessions", DataTable).focus()
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen), "the confirmation")
        await pilot.press("y")
        with daemon.client() as client:
            handoffs = await wait_until(pilot, lambda: client.call("handoffs.list")["handoffs"], "the handoff")
        assert handoffs[0]["session"] == EXAMPLE_SESSION

    drive(scenario)


def test_verify_reports_an_intact_log_without_asking(daemon: Any) -> None:
    with daemon.client() as client:
        import_example(client)

    async def scenario(pilot: Pilot[None]) -> None:
        await wait_until(pilot, lambda: rows(pilot, "#sessions"), "the sessions")
        await pilot.press("v")
        notes = await wait_until(pilot, lambda: [n.message for n in pilot.app._notifications], "a notification")
        assert any("intact" in note for note in notes)
        assert isinstance(pilot.app.screen, OverviewScreen)

    drive(scenario)
