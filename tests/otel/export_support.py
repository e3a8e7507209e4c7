"""What the export tests share: the real `toka` command, a small session appended through the
client, the spans a session should give, and `toka report`'s totals to hold them to."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from collector_support import Collector, Received, usage_totals

from daemon.client.sync import Client

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "session.jsonl"
EXAMPLE_SESSION = "fix-login-timeout"
# The example's spans: 3 requests, 7 tool calls, its main agent.
EXAMPLE_SPANS = 11
TOKA = Path(sys.executable).parent / "toka"
REPORT_FIELDS = ("calls", "input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens", "cost_usd")


def toka(*args: str, env: Mapping[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TOKA), *args], capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=timeout
    )


def toka_json(*args: str, env: Mapping[str, str] | None = None) -> Any:
    result = toka(*args, "--json", env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def report_totals(*sessions: str) -> dict[str, Any]:
    """`toka report session`'s tokens and cost over ``sessions`` (all when none)."""
    rows = [row for row in toka_json("report", "session")["rows"] if not sessions or row["session"] in sessions]
    totals: dict[str, Any] = {name: sum(row[name] or 0 for row in rows) for name in REPORT_FIELDS}
    return totals | {"cost_usd": round(totals["cost_usd"], 6)}


def small_session(session: str, *, secret: str = "") -> list[dict[str, Any]]:
    """A session of one prompt, one tool call and two requests, its times in 2026."""

    def at(second: int) -> str:
        return f"2026-02-01T10:00:{second:02d}.000000Z"

    usage = {"model": "claude-sonnet-4-5", "input_tokens": 120, "output_tokens": 40, "cache_read_tokens": 900}

    def event(kind: str, second: int, payload: dict[str, Any]) -> dict[str, Any]:
        return {"session": session, "agent": "main", "kind": kind, "ts": at(second), "payload": payload}

    call = {"tool": "Bash", "tool_use_id": f"{session}-t1", "input": {"command": f"echo {secret}"}}
    return [
        event("message", 0, {"role": "user", "text": f"fix it {secret}"}),
        event("usage", 3, usage | {"request_id": f"{session}-r1"}),
        event("tool.call", 4, call),
        event("tool.result", 6, {"tool_use_id": f"{session}-t1", "output": f"{secret} ok", "is_error": False}),
        event("usage", 9, usage | {"request_id": f"{session}-r2"}),
    ]


SMALL_SPANS = 4  # two requests, a tool call, the main agent


def append(events: list[dict[str, Any]]) -> None:
    with Client() as client:
        client.append(events)


def spans_of(collector: Collector, session: str) -> list[Received]:
    return [span for span in collector.received() if span.attributes.get("gen_ai.conversation.id") == session]


def assert_reports_totals(collector: Collector, *sessions: str) -> None:
    """Each session's request spans add up to its row of `toka report session` (a row's cost is
    rounded to the millionth of a dollar, so sessions are compared one by one)."""
    for session in sessions:
        assert usage_totals(spans_of(collector, session)) == report_totals(session), session
