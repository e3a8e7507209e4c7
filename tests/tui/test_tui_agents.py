"""The overview's agents: the live ones; the ended (their session's SessionEnd came, or they went
quiet) on request, with `e`, and hidden again."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot
from tui_driver import drive, rows, screen_text, wait_until

SONNET = {"model": "claude-sonnet-4-5", "input_tokens": 100, "cache_read_tokens": 49_900, "output_tokens": 20}


def test_the_overview_shows_live_agents_and_the_ended_on_request(daemon: Any) -> None:
    with daemon.client() as client:
        for session in ("gone", "here"):
            client.append([{"session": session, "kind": "usage", "agent": "main", "payload": SONNET}])
        client.append([{"session": "gone", "kind": "hook.session_end", "payload": {"reason": "exit"}}])

    def agents(pilot: Pilot[None]) -> list[str]:
        return [row.split(" | ")[2] for row in rows(pilot, "#agents")]

    async def scenario(pilot: Pilot[None]) -> None:
        # The table's rows and its title are drawn apart: each is waited for.
        await wait_until(pilot, lambda: agents(pilot) == ["here/main"], "the live agent alone")
        await wait_until(pilot, lambda: "Agents · 1 ended (e shows them)" in screen_text(pilot.app), "the title")
        await pilot.press("e")
        await wait_until(pilot, lambda: agents(pilot) == ["here/main", "gone/main"], "the ended agent too")
        assert rows(pilot, "#agents")[1].startswith("ENDED")
        await wait_until(
            pilot, lambda: "Agents · 1 ended (shown, e hides them)" in screen_text(pilot.app), "the title, shown"
        )
        await pilot.press("e")
        await wait_until(pilot, lambda: agents(pilot) == ["here/main"], "the ended agent hidden again")

    drive(scenario)
