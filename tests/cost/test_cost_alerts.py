"""Alerts: an agent going WARNING or CRITICAL and a 5-hour block over its configured limit are
recorded as `alert` events (once each) and listed by `toka alerts`; `[alerts] command` runs with
the alert as JSON on stdin, rate-limited, and a slow command never holds the daemon up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from daemons import Spawner, wait_for

from daemon.client.sync import Client

TOKA = Path(sys.executable).parent / "toka"


def configure(home: Path, command: str = "", **alerts: Any) -> None:
    lines = ["[alerts]", f"command = {json.dumps(command)}", *(f"{k} = {v!r}" for k, v in alerts.items())]
    (home / "config.toml").write_text("\n".join(lines) + "\n")


def fill(session: str, context: int, agent: str = "main", ts: float | None = None) -> None:
    """A usage event of ``context`` tokens of prompt; at ``ts`` (Unix seconds), else now."""
    usage = {"model": "claude-sonnet-4-5", "input_tokens": 10, "cache_read_tokens": context - 10, "output_tokens": 50}
    event = {"session": session, "kind": "usage", "agent": agent, "payload": usage}
    with Client(autostart=False) as client:
        client.append([event if ts is None else event | {"ts": ts}])


def listed(*args: str) -> list[dict[str, Any]]:
    result = subprocess.run([str(TOKA), "alerts", "--json", *args], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    alerts: list[dict[str, Any]] = json.loads(result.stdout)["alerts"]
    return alerts


def test_an_agent_going_warning_then_critical_raises_two_alerts(toka_home: Path, spawn: Spawner) -> None:
    received = toka_home / "received.jsonl"
    configure(toka_home, f"cat >> {received}")
    spawn()
    fill("s1", 160_000)  # 80% of 200k
    fill("s1", 185_000)  # 92.5%
    alerts = wait_for(lambda: len(listed()) == 2 and listed(), "two alerts")
    assert [(a["type"], a["level"], a["state"], a["agent"]) for a in alerts] == [
        ("agent", "warning", "WARNING", "s1/main"),
        ("agent", "critical", "CRITICAL", "s1/main"),
    ]
    assert alerts[0]["message"] == "agent s1/main is WARNING: context 80.0% of 200,000 tokens"
    assert alerts[0]["command"] == "run" and alerts[0]["fill_pct"] == 80.0
    lines = wait_for(
        lambda: received.exists() and len(received.read_text().splitlines()) == 2 and received, "the command"
    )
    sent = [json.loads(line) for line in lines.read_text().splitlines()]
    assert sorted(a["id"] for a in sent) == sorted(a["id"] for a in alerts)  # the alert itself, on stdin


def test_a_change_imported_from_the_past_is_recorded_but_raises_no_alert(toka_home: Path, spawn: Spawner) -> None:
    received = toka_home / "received.jsonl"
    configure(toka_home, f"cat >> {received}")
    spawn()
    fill("past", 185_000, ts=1_767_225_600)  # 2026-01-01: a session imported long after it ran
    fill("now", 185_000)

    alerts = wait_for(lambda: listed(), "the alert of the current session")
    assert [a["agent"] for a in alerts] == ["now/main"]
    with Client(autostart=False) as client:
        changes = client.call("events.query", session="past", kinds=["lifecycle"])["events"]
    assert [e["payload"]["to"] for e in changes] == ["CRITICAL"]
    assert len(wait_for(lambda: received.exists() and received.read_text().splitlines(), "the command")) == 1


def test_the_command_is_rate_limited_per_alert(toka_home: Path, spawn: Spawner) -> None:
    configure(toka_home, "true", command_interval_s=3600.0)
    spawn()
    fill("s1", 160_000)
    fill("s1", 20_000)  # back to ACTIVE (a compaction)
    fill("s1", 160_000)  # WARNING again, within the hour
    fill("s2", 160_000)  # another agent: its own turn
    alerts = wait_for(lambda: len(listed()) == 3 and listed(), "three alerts")
    assert [(a["agent"], a["command"]) for a in alerts] == [
        ("s1/main", "run"),
        ("s1/main", "rate_limited"),
        ("s2/main", "run"),
    ]


def test_a_block_over_its_cost_limit_raises_one_alert(toka_home: Path, spawn: Spawner) -> None:
    configure(toka_home, block_cost_limit=0.5)
    spawn()
    opus = {"model": "claude-opus-4-6", "input_tokens": 100_000, "output_tokens": 10_000}  # $0.75 a call
    with Client(autostart=False) as client:
        client.append([{"session": "s2", "kind": "usage", "payload": opus} for _ in range(2)])
    alert = wait_for(lambda: [a for a in listed() if a["type"] == "block"], "a block alert")
    assert set(alert[0]) == {"seq", "id", "ts", "type", "level", "message", "limit", "used", "limit_value",
                             "block_start", "block_end", "command"}  # docs/json.md  # fmt: skip
    assert len(alert) == 1
    assert (alert[0]["limit"], alert[0]["limit_value"], alert[0]["level"]) == ("cost", 0.5, "critical")
    assert alert[0]["used"] > 0.5 and alert[0]["command"] == "none"
    with Client(autostart=False) as client:
        client.append([{"session": "s2", "kind": "usage", "payload": opus}])
        assert client.call("report", kind="blocks")["limits"]["cost_limit"] == 0.5  # the report's default limit
    wait_for(lambda: len(listed()) >= 1, "the alerts")
    assert len([a for a in listed() if a["type"] == "block"]) == 1  # once per block


def test_a_slow_command_never_holds_the_daemon_up(toka_home: Path, spawn: Spawner) -> None:
    pid_file = toka_home / "command.pid"
    configure(toka_home, f"echo $$ > {pid_file}; cat > /dev/null; sleep 60", command_timeout_s=120.0)
    running = spawn()
    fill("s1", 160_000)
    pid = int(wait_for(lambda: pid_file.exists() and pid_file.read_text().strip(), "the command to start"))
    fill("s1", 185_000)  # the daemon goes on while the command sleeps
    assert [a["state"] for a in wait_for(lambda: len(listed()) == 2 and listed(), "both alerts")] == [
        "WARNING",
        "CRITICAL",
    ]
    assert running.stop() == 0
    with pytest.raises(ProcessLookupError):  # stopped with the daemon, after its deadline
        wait_for(lambda: os.kill(pid, 0) is not None, "never")  # raises once the command is gone


def test_a_test_alert_runs_the_command(toka_home: Path, spawn: Spawner) -> None:
    received = toka_home / "received.json"
    configure(toka_home, f'cat > {received}; echo "$TOKA_ALERT_LEVEL" >> {received}.level')
    spawn()
    result = subprocess.run([str(TOKA), "alerts", "--test", "--json"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    alert = json.loads(result.stdout)
    assert (alert["type"], alert["level"], alert["command"]) == ("test", "info", "run")
    wait_for(lambda: Path(f"{received}.level").exists(), "the command")
    assert json.loads(received.read_text())["id"] == alert["id"]
    assert Path(f"{received}.level").read_text() == "info\n"
    shown = subprocess.run(
        [str(TOKA), "alerts"], capture_output=True, text=True, timeout=30, env={**os.environ, "NO_COLOR": "1"}
    )
    assert "info" in shown.stdout and "a test alert" in shown.stdout


def test_bad_alert_settings_are_refused(toka_home: Path) -> None:
    configure(toka_home, block_cost_limit=-1.0)
    result = subprocess.run([str(TOKA), "alerts"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert "alerts.block_cost_limit" in result.stderr and "must be a number from 0 to" in result.stderr
