"""The cost screen: today's cost, the active block with its burn rate, the agents of the day; new
usage shows up from the app's subscription without a keypress; it fits 80×24."""

from __future__ import annotations

import time
from typing import Any

from textual.pilot import Pilot
from tui_driver import drive, in_thread, rows, screen_text, wait_until

from toka_cli.tui.screens.cost import CostScreen

OPUS = {"model": "claude-opus-4-6", "input_tokens": 10, "cache_read_tokens": 100_000, "output_tokens": 1000}
OPUS_COST = (10 * 5 + 100_000 * 0.5 + 1000 * 25) / 1e6  # $0.07505 a call


def usage(client: Any, session: str, agent: str, minutes_ago: float) -> None:
    """A call ``minutes_ago`` minutes ago, or, that soon after midnight, at the same share of the
    hour today: it must count in today's cost whatever the time the test runs at."""
    now = time.time()
    since_midnight = now - time.mktime(time.localtime(now)[:3] + (0, 0, 0, 0, 0, -1))
    ago = min(minutes_ago * 60, since_midnight * minutes_ago / 60)
    client.append([{"session": session, "kind": "usage", "agent": agent, "payload": OPUS, "ts": now - ago}])


def test_the_cost_screen_shows_today_the_block_and_the_agents(daemon: Any) -> None:
    with daemon.client() as client:
        usage(client, "s1", "main", 40)
        usage(client, "s1", "explorer", 20)

    async def scenario(pilot: Pilot[None]) -> None:
        await pilot.press("5")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, CostScreen), "the cost screen")
        agents = await wait_until(
            pilot, lambda: len(rows(pilot, "#cost-agents")) == 2 and rows(pilot, "#cost-agents"), "agents"
        )
        assert sorted(row.split(" | ")[0] for row in agents) == ["s1/explorer", "s1/main"]
        text = await wait_until(pilot, lambda: "burn rate" in (shown := screen_text(pilot.app)) and shown, "the block")
        assert f"${2 * OPUS_COST:.2f} · 202k tokens · 2 calls" in text  # today
        assert "left" in text and "tokens/min" in text

    drive(scenario, size=(80, 24))


def test_new_usage_shows_up_without_a_keypress(daemon: Any) -> None:
    with daemon.client() as client:
        usage(client, "s1", "main", 10)

    async def scenario(pilot: Pilot[None]) -> None:
        await pilot.press("5")
        await wait_until(pilot, lambda: len(rows(pilot, "#cost-agents")) == 1, "the first agent")

        def more() -> None:
            with daemon.client() as client:
                usage(client, "s2", "main", 0)

        await in_thread(more)
        agents = await wait_until(
            pilot, lambda: len(rows(pilot, "#cost-agents")) == 2 and rows(pilot, "#cost-agents"), "the new agent"
        )
        assert any(row.startswith("s2/main") for row in agents)
        await wait_until(pilot, lambda: "2 calls" in screen_text(pilot.app), "today's calls updated")

    drive(scenario)


def test_with_no_usage_it_says_so(daemon: Any) -> None:
    async def scenario(pilot: Pilot[None]) -> None:
        await pilot.press("5")
        text = await wait_until(pilot, lambda: "no active block" in (shown := screen_text(pilot.app)) and shown, "it")
        assert "$0.00 · 0 tokens · 0 calls" in text
        assert "Refresh" in text.splitlines()[-1]

    drive(scenario)
