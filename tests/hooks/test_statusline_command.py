"""`toka statusline`: Claude Code's status line in one line and one round trip: the model, the
context fill and headroom (the input's own window), the session's cost and the active block's
cost and time left; Claude Code's own figures when the daemon is down; always exit 0; the fast
path loads neither Typer nor Rich."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from hook_support import TOKA

from daemon.client.sync import Client
from daemon.paths import resolve_paths

SESSION = "s-line"
OPUS = {"model": "claude-opus-4-6", "input_tokens": 10, "cache_read_tokens": 109_990, "output_tokens": 1000}
OPUS_COST = (10 * 5 + 109_990 * 0.5 + 1000 * 25) / 1e6  # $0.080005 a call


def status_input(size: int = 200_000, used_pct: float = 12.0, cost: float = 0.42) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": "/tmp/none.jsonl",
        "cwd": "/tmp",
        "model": {"id": "claude-opus-4-6", "display_name": "Opus 4.6"},
        "version": "2.1.332",
        "cost": {"total_cost_usd": cost},
        "context_window": {"context_window_size": size, "used_percentage": used_pct},
    }


def statusline(payload: dict[str, Any] | bytes) -> subprocess.CompletedProcess[str]:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    result = subprocess.run([str(TOKA), "statusline"], input=data, capture_output=True, timeout=30)
    return subprocess.CompletedProcess(result.args, result.returncode, result.stdout.decode(), result.stderr.decode())


def test_the_line_has_model_fill_headroom_session_and_block(daemon: object) -> None:
    now = time.time()
    with Client(autostart=False) as client:
        client.append(
            [
                {"session": SESSION, "kind": "usage", "agent": "main", "payload": OPUS, "ts": now - m * 60}
                for m in (50, 20)
            ]
        )
    result = statusline(status_input(used_pct=55.0))
    assert (result.returncode, result.stderr) == (0, "")
    # 110,000 of the input's 200,000: 55%, 90k left
    session = f"${2 * OPUS_COST:.2f}"
    assert result.stdout.startswith(f"Opus 4.6 · ctx 55% (90k left) · session {session} · block {session}, ")
    assert result.stdout.endswith(" left\n") and result.stdout.count("\n") == 1


def test_the_input_is_recorded_once_and_its_window_taken_in(daemon: object) -> None:
    for _ in range(2):
        assert statusline(status_input(size=1_000_000)).returncode == 0
    with Client(autostart=False) as client:
        events = client.call("events.query", session=SESSION, kinds=["statusline"])["events"]
        client.append([{"session": SESSION, "kind": "usage", "payload": OPUS}])
        usage = client.call("usage", session=SESSION)
    assert len(events) == 1
    assert (usage["context_window"], usage["window_source"]) == (1_000_000, "reported")


def test_the_answer_of_the_statusline_op_is_documented(daemon: object) -> None:
    event = {"session": SESSION, "kind": "statusline", "agent": "main", "payload": status_input(), "key": "k1"}
    with Client(autostart=False) as client:
        client.append([{"session": SESSION, "kind": "usage", "payload": OPUS}])
        answer = client.call("statusline", event=event)
    assert set(answer) == {"session", "model", "context_tokens", "context_window", "window_source", "fill_pct",
                           "headroom_tokens", "state", "source", "session_cost", "block", "prices"}  # fmt: skip
    assert answer["session_cost"] == {"calls": 1, "cost_usd": round(OPUS_COST, 6), "unpriced_calls": 0}
    assert set(answer["block"]) == {"start", "end", "remaining_minutes", "total_tokens", "cost_usd", "unpriced_calls"}
    assert answer["prices"]["table"] == "genai-prices 0.2.3"


def test_with_the_daemon_down_it_shows_claude_codes_figures_and_spools(toka_home: Path) -> None:
    result = statusline(status_input(used_pct=23.4, cost=1.5))
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == "Opus 4.6 · ctx 23% (153k left) · session $1.50\n"
    assert resolve_paths().spool.exists()


def test_a_bad_input_still_prints_a_line(toka_home: Path) -> None:
    result = statusline(b"not json")
    assert (result.returncode, result.stdout) == (0, "toka · no figures yet\n")
    assert "nothing recorded: stdin is not JSON" in result.stderr


def test_the_fast_path_loads_neither_typer_nor_rich(daemon: object) -> None:
    heavy = ("typer", "rich", "textual", "asyncio", "aiosqlite", "pydantic", "blake3", "click", "zoneinfo")
    check = (
        "import sys\n"
        "sys.argv = ['toka', 'statusline']\n"
        "from toka_cli.entry import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exit:\n"
        "    code = exit.code\n"
        f"print(code, sorted(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", check], input=json.dumps(status_input()), capture_output=True, text=True, timeout=60
    )
    assert result.stderr.strip() == "0 []"
    assert result.stdout == "Opus 4.6 · ctx 12% (176k left) · session $0.42\n"  # toka has no usage of it yet


def test_its_help_comes_from_the_app() -> None:
    shown = subprocess.run(
        [str(TOKA), "statusline", "--help"], capture_output=True, text=True, timeout=60, env=os.environ
    )
    assert shown.returncode == 0 and "status line" in shown.stdout
