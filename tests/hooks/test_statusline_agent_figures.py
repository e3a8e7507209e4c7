"""`toka statusline` trusts the agent: when Claude Code's input carries ``context_window``, its
figure of the moment is the line's context, the lifecycle's state and the alerts of that moment,
over an older figure of toka's own; a session toka does not know yet shows Claude Code's figures
plainly, with its cost; the plan's limits (``rate_limits``) are shown used and when they reset."""

from __future__ import annotations

import json
import subprocess
import time
from typing import Any

from hook_support import TOKA

from daemon.client.sync import Client
from toka_cli.statusline import line

SESSION = "s-agent"


def status_input(session: str = SESSION, **extra: Any) -> dict[str, Any]:
    """Claude Code 2.1.332's status line input (shared/docs/real-clients.md), 4% of 200k used."""
    return {
        "session_id": session,
        "transcript_path": "/tmp/none.jsonl",
        "cwd": "/tmp",
        "model": {"id": "claude-opus-4-8", "display_name": "Opus 4.8"},
        "version": "2.1.332",
        "cost": {"total_cost_usd": 0.42},
        "context_window": {
            "context_window_size": 200_000,
            "used_percentage": 4,
            "remaining_percentage": 96,
            "total_input_tokens": 8_000,
            "current_usage": {"input_tokens": 5, "cache_creation_input_tokens": 995, "cache_read_input_tokens": 7000,
                              "output_tokens": 300},
        },
        "exceeds_200k_tokens": False,
        **extra,
    }  # fmt: skip


def statusline(payload: dict[str, Any]) -> str:
    result = subprocess.run(
        [str(TOKA), "statusline"], input=json.dumps(payload).encode(), capture_output=True, timeout=30
    )
    assert (result.returncode, result.stderr) == (0, b"")
    return result.stdout.decode()


def test_the_agents_figure_wins_over_an_older_one_of_tokas(daemon: object) -> None:
    """toka last saw a 298k prompt (before /compact); Claude Code says 4% of its 200k now: the line,
    the state and the alerts say 4%, not 149% CRITICAL."""
    earlier = time.time() - 600
    usage = {"model": "claude-opus-4-8", "input_tokens": 10, "cache_read_tokens": 297_990, "output_tokens": 5}
    with Client(autostart=False) as client:
        client.append([{"session": SESSION, "agent": "main", "kind": "usage", "payload": usage, "ts": earlier}])
    shown = statusline(status_input())
    assert shown.startswith("Opus 4.8 · ctx 4% (192k left) · session $")
    assert "CRITICAL" not in shown and "WARNING" not in shown
    with Client(autostart=False) as client:
        figures = client.call("usage", session=SESSION)
        changes = client.call("events.query", session=SESSION, kinds=["lifecycle"])["events"]
        at_risk = client.call("status")["agents_at_risk"]
    assert (figures["context_tokens"], figures["context_window"], figures["fill_pct"]) == (8_000, 200_000, 4.0)
    assert [c["payload"]["to"] for c in changes if c["payload"]["to"] in ("WARNING", "CRITICAL")] == []
    assert at_risk == []


def test_the_agents_figure_moves_the_state_when_it_crosses_a_threshold(daemon: object) -> None:
    window = {"context_window_size": 200_000, "used_percentage": 91, "current_usage": {"input_tokens": 182_000}}
    assert statusline(status_input("s-full", context_window=window)).startswith(
        "Opus 4.8 · ctx 91% (18k left) CRITICAL"
    )
    with Client(autostart=False) as client:
        [change] = client.call("events.query", session="s-full", kinds=["lifecycle"])["events"]
        cause = client.call("events.get", id=change["payload"]["cause"])
    assert (change["payload"]["to"], change["payload"]["context_tokens"], cause["kind"]) == (
        "CRITICAL",
        182_000,
        "statusline",
    )


def test_a_session_toka_does_not_know_shows_claude_codes_figures_plainly(daemon: object) -> None:
    assert statusline(status_input("s-new")) == "Opus 4.8 · ctx 4% (192k left) · session $0.42\n"


def test_the_plans_limits_are_shown_used_and_when_they_reset() -> None:
    now = 1_780_000_000.0
    limits = {
        "five_hour": {"used_percentage": 23.5, "resets_at": int(now + 86 * 60)},
        "seven_day": {"used_percentage": 41.2, "resets_at": int(now + (3 * 24 + 4) * 3600 + 120)},
    }
    payload = status_input(rate_limits=limits)
    assert line(None, payload, now) == (
        "Opus 4.8 · ctx 4% (192k left) · session $0.42 · 5h 24% resets 1h26m · 7d 41% resets 3d4h"
    )
    assert line(None, status_input(), now) == "Opus 4.8 · ctx 4% (192k left) · session $0.42"


def test_the_limits_reach_the_line_through_the_command(daemon: object) -> None:
    resets = int(time.time()) + 2 * 3600 + 30 * 60 + 30
    limits = {"five_hour": {"used_percentage": 62, "resets_at": resets}}
    shown = statusline(status_input("s-limits", rate_limits=limits))
    assert shown.endswith(" · 5h 62% resets 2h30m\n") or shown.endswith(" · 5h 62% resets 2h29m\n")
