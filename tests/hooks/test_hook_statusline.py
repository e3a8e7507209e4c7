"""`toka hook claude-code --statusline`: Claude Code's status line command. Its input carries
the agent's own context window, which toka then uses over every other source; it always prints
one line, from toka's figures when the daemon has them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hook_support import run_hook

from daemon.client.sync import Client
from daemon.paths import resolve_paths

SESSION = "s-status"


def _input(size: int, used_pct: float = 12.0) -> dict[str, Any]:
    """A status line input shaped as Claude Code 2.1 sends it (shared/docs/real-clients.md)."""
    return {
        "session_id": SESSION,
        "transcript_path": "/tmp/none.jsonl",
        "cwd": "/tmp",
        "model": {"id": "claude-opus-4-6", "display_name": "Opus 4.6"},
        "version": "2.1.332",
        "cost": {"total_cost_usd": 0.42},
        "context_window": {
            "context_window_size": size,
            "used_percentage": used_pct,
            "remaining_percentage": 100 - used_pct,
            "total_input_tokens": 1000,
        },
        "exceeds_200k_tokens": False,
    }


def _usage(tokens: int) -> None:
    with Client(autostart=False) as client:
        usage = {"model": "claude-opus-4-6", "input_tokens": 10, "cache_read_tokens": tokens - 10, "output_tokens": 5}
        client.record(SESSION, "usage", usage)


def test_the_status_lines_window_wins_over_the_model_table(daemon: object) -> None:
    _usage(160_000)  # the table gives claude-opus-4-6 1M: 16%
    result = run_hook(json.dumps(_input(200_000)), "--statusline")
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout.decode() == "toka · context 80% of 200k; compaction near · WARNING\n"
    with Client(autostart=False) as client:
        usage = client.call("usage", session=SESSION)
        [event] = client.call("events.query", session=SESSION, kinds=["statusline"])["events"]
    assert (usage["context_window"], usage["window_source"], usage["fill_pct"]) == (200_000, "reported", 80.0)
    assert event["payload"]["context_window"]["context_window_size"] == 200_000


def test_the_same_input_twice_is_recorded_once(daemon: object) -> None:
    _usage(100_000)
    for _ in range(2):
        assert run_hook(json.dumps(_input(1_000_000)), "--statusline").stdout.decode() == "toka · context 10% of 1M\n"
    with Client(autostart=False) as client:
        assert len(client.call("events.query", session=SESSION, kinds=["statusline"])["events"]) == 1


def test_with_the_daemon_down_it_shows_claude_codes_figure_and_spools(toka_home: Path) -> None:
    result = run_hook(json.dumps(_input(1_000_000, used_pct=23.4)), "--statusline")
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout.decode() == "toka · context 23% (Claude Code's figure; toka has none yet)\n"
    assert resolve_paths().spool.exists()


def test_a_bad_input_still_prints_a_line(toka_home: Path) -> None:
    result = run_hook(b"not json", "--statusline")
    assert result.returncode == 0
    assert result.stdout.decode() == "toka · no figures yet\n"
    assert b"nothing recorded: stdin is not JSON" in result.stderr
