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


def shown_at(moment: float) -> str:
    """A time as the dashboard shows it: the hour alone on today's date, with the date on another
    (a reset two hours away falls on tomorrow late in the evening)."""
    now = time.localtime()
    at = time.localtime(moment)
    same_day = (at.tm_year, at.tm_yday) == (now.tm_year, now.tm_yday)
    return time.strftime("%H:%M" if same_day else "%Y-%m-%d %H:%M", at)


def test_codex_limits_show_as_bars_with_their_reset_and_when_they_run_out(daemon: Any) -> None:
    read = int(time.time()) - 60
    read -= 1 if read % 60 == 0 else 0  # the minute it runs out at, whatever the rounding
    limits = {
        # 80% three hours into five: at 26.7%/h the rest goes in 45 minutes, before the reset
        "primary": {"used_percent": 80.0, "window_minutes": 300, "resets_at": int(read + 2 * 3600)},
        # 10% six days into seven: lasts until it resets
        "secondary": {"used_percent": 10.0, "window_minutes": 10080, "resets_at": int(read + 86_400)},
    }
    gpt = {"model": "gpt-5.3-codex", "input_tokens": 500, "output_tokens": 20, "rate_limits": limits}
    with daemon.client() as client:
        client.append([{"session": "cx", "kind": "session.meta", "payload": {"source": "codex"}, "ts": read}])
        client.append([{"session": "cx", "kind": "usage", "agent": "main", "payload": gpt, "ts": read}])

    async def scenario(pilot: Pilot[None]) -> None:
        await pilot.press("5")
        text = await wait_until(pilot, lambda: "weekly" in (shown := screen_text(pilot.app)) and shown, "the windows")
        shown = text.splitlines()
        [at] = [n for n, line in enumerate(shown) if "5-hour" in line and "%" in line]
        five = " ".join(shown[at : at + 3])
        [at] = [n for n, line in enumerate(shown) if "weekly" in line and "%" in line]
        week = " ".join(shown[at : at + 3])
        # The dashboard's gauge: 8 of 10 filled for 80%, 1 for 10%.
        runs_out = shown_at(read + 45 * 60)
        resets = shown_at(read + 2 * 3600)
        assert "████████░░   80%" in five and f"resets {resets}" in five
        assert "at 26.67%/h runs out " in five and five.rstrip().endswith(runs_out), text
        assert "█░░░░░░░░░   10%" in week and "lasts until it resets" in week
        # Claude's block holds none of Codex's usage.
        assert "no active block" in text

    drive(scenario, size=(100, 30))
