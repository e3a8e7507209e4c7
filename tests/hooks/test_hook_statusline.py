"""`toka hook claude-code --statusline`: the older spelling of `toka statusline`, which
settings.json files may still name. It is the same command: its input carries the agent's own
context window, which toka then uses over every other source; it always prints one line, from
toka's figures when the daemon has them; and for the same input it prints the same line and
records (or spools) the same event as `toka statusline`."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path
from typing import Any

from hook_support import TOKA, run_hook

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


def _usage(tokens: int, session: str = SESSION) -> None:
    with Client(autostart=False) as client:
        usage = {"model": "claude-opus-4-6", "input_tokens": 10, "cache_read_tokens": tokens - 10, "output_tokens": 5}
        client.record(session, "usage", usage)


def test_the_status_lines_window_wins_over_the_model_table(daemon: object) -> None:
    _usage(160_000)  # the table gives claude-opus-4-6 1M: 16%
    result = run_hook(json.dumps(_input(200_000, used_pct=80.0)), "--statusline")
    assert (result.returncode, result.stderr) == (0, b"")
    # 160,000 of the input's 200,000, not of the table's 1M
    assert result.stdout.decode().startswith("Opus 4.6 · ctx 80% (40k left) WARNING · session $")
    with Client(autostart=False) as client:
        usage = client.call("usage", session=SESSION)
        [event] = client.call("events.query", session=SESSION, kinds=["statusline"])["events"]
    assert (usage["context_window"], usage["window_source"], usage["fill_pct"]) == (200_000, "reported", 80.0)
    assert event["payload"]["context_window"]["context_window_size"] == 200_000


def test_the_same_input_twice_is_recorded_once(daemon: object) -> None:
    _usage(100_000)
    for _ in range(2):
        shown = run_hook(json.dumps(_input(1_000_000, used_pct=10.0)), "--statusline").stdout.decode()
        assert shown.startswith("Opus 4.6 · ctx 10% (900k left) · session $")
    with Client(autostart=False) as client:
        assert len(client.call("events.query", session=SESSION, kinds=["statusline"])["events"]) == 1


def test_with_the_daemon_down_it_shows_claude_codes_figure_and_spools(toka_home: Path) -> None:
    result = run_hook(json.dumps(_input(1_000_000, used_pct=23.4)), "--statusline")
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout.decode() == "Opus 4.6 · ctx 23% (766k left) · session $0.42\n"
    assert resolve_paths().spool.exists()


def test_a_bad_input_still_prints_a_line(toka_home: Path) -> None:
    result = run_hook(b"not json", "--statusline")
    assert result.returncode == 0
    assert result.stdout.decode() == "toka · no figures yet\n"
    assert b"nothing recorded: stdin is not JSON" in result.stderr


SPELLINGS = {"command": ["statusline"], "alias": ["hook", "claude-code", "--statusline"]}


def _run(spelling: str, raw: bytes) -> tuple[str, str]:
    """What `toka statusline` ("command") or `toka hook claude-code --statusline` ("alias")
    prints for ``raw``: (stdout, stderr); it exits 0."""
    result = subprocess.run([str(TOKA), *SPELLINGS[spelling]], input=raw, capture_output=True, timeout=30)
    assert result.returncode == 0, result
    return result.stdout.decode(), result.stderr.decode()


def _same_minute(line: str) -> str:
    """The line without the block's time left: a minute may turn between two runs."""
    return re.sub(r"\d+h \d+m left|\d+m left", "T left", line)


def _as_recorded(event: dict[str, Any], raw: bytes) -> dict[str, Any]:
    """An event as either spelling records it, keyed by its own input's bytes, without what
    differs from one run to the next (when, and where it landed) or names its session."""
    assert event["key"] == "statusline:" + hashlib.sha256(raw).hexdigest()
    payload = {k: v for k, v in event["payload"].items() if k != "session_id"}
    assert event["payload"]["session_id"] == event["session"]
    kept = {k: v for k, v in event.items() if k not in ("seq", "id", "ts", "digest", "parents", "key", "session")}
    return {**kept, "payload": payload}


def test_the_alias_prints_and_records_what_the_command_does(daemon: object) -> None:
    for spelling in SPELLINGS:  # a session each, with the same usage (the block sums both) and input
        _usage(160_000, f"s-{spelling}")
    shown, recorded = {}, {}
    for spelling in SPELLINGS:
        session = f"s-{spelling}"
        raw = json.dumps({**_input(200_000, used_pct=80.0), "session_id": session}).encode()
        shown[spelling] = _run(spelling, raw)
        with Client(autostart=False) as client:
            [event] = client.call("events.query", session=session, kinds=["statusline"])["events"]
        recorded[spelling] = _as_recorded(event, raw)
    assert shown["command"][0].startswith("Opus 4.6 · ctx 80% (40k left) WARNING · session $")
    assert _same_minute(shown["alias"][0]) == _same_minute(shown["command"][0])
    assert shown["alias"][1] == shown["command"][1] == ""
    assert recorded["alias"] == recorded["command"]
    assert recorded["alias"]["kind"] == "statusline" and recorded["alias"]["agent"] == "main"
    # The command's very input through the alias is the same occurrence: recorded once.
    raw = json.dumps({**_input(200_000, used_pct=80.0), "session_id": "s-command"}).encode()
    assert _same_minute(_run("alias", raw)[0]) == _same_minute(shown["command"][0])
    with Client(autostart=False) as client:
        assert len(client.call("events.query", session="s-command", kinds=["statusline"])["events"]) == 1


def test_with_the_daemon_down_the_alias_prints_and_spools_what_the_command_does(toka_home: Path) -> None:
    raw = json.dumps(_input(1_000_000, used_pct=23.4)).encode()
    command, alias = _run("command", raw), _run("alias", raw)
    assert alias == command == ("Opus 4.6 · ctx 23% (766k left) · session $0.42\n", "")
    spooled = [json.loads(line) for line in resolve_paths().spool.read_bytes().splitlines()]
    assert len(spooled) == 2  # one line each, the same event but for when it was spooled
    assert [event["session"] for event in spooled] == [SESSION, SESSION]
    assert _as_recorded(spooled[1], raw) == _as_recorded(spooled[0], raw)
    assert _as_recorded(spooled[0], raw)["kind"] == "statusline"
