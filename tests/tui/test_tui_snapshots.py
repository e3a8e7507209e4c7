"""Screenshots of the dashboard at 80×24 and 120×40, checked against the committed ones
(tests/tui/__snapshots__/; `pytest --snapshot-update` rewrites them after a change meant so).

What they show is held still: the example session and one recorded with fixed times, keys and
payloads (so ids are the same on every run), the clock at a fixed moment and the zone UTC.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from daemons import wait_for
from textual.pilot import Pilot
from tui_driver import import_example, rows, screen_text, wait_until

from daemon.client.sync import Client
from toka_cli.tui.app import TokaApp

NOW = datetime(2026, 3, 14, 12, 0, tzinfo=UTC)  # the example session's day
SIZES = [(80, 24), (120, 40)]
BILLING_SESSION = "5f0c2a9e-7d41-4c3b-9a26-e1b8d0f4c7a3"  # a uuid, as Claude Code names sessions


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def record_a_session(client: Client) -> None:
    """A session of three days before: its context at 70% of 200k after a compaction. (No
    threshold is crossed: the alert that would raise is stamped with the real time.)"""
    usage = {"model": "claude-sonnet-4-5", "input_tokens": 12, "cache_read_tokens": 100_000, "output_tokens": 40}
    events = [
        ("message", {"role": "user", "text": "Split the billing module"}),
        ("tool.call", {"tool": "Bash", "input": {"command": "pytest -q tests/billing"}, "tool_use_id": "t1"}),
        ("tool.result", {"tool_use_id": "t1", "output": "12 passed", "is_error": False}),
        ("usage", usage | {"cache_read_tokens": 138_000}),
        ("compaction", {"trigger": "auto", "pre_tokens": 138_052}),
        ("usage", usage | {"cache_read_tokens": 30_000}),
        ("message", {"role": "user", "text": "Now the invoices"}),
        ("usage", usage | {"cache_read_tokens": 139_948}),
    ]
    client.append(
        [
            {
                "session": BILLING_SESSION,
                "agent": "main",
                "kind": kind,
                "payload": payload,
                "key": f"k{n}",
                "ts": f"2026-03-11T16:{n:02d}:00Z",
            }
            for n, (kind, payload) in enumerate(events)
        ]
    )


async def overview_ready(pilot: Pilot[None]) -> None:
    def ready() -> bool:
        text = screen_text(pilot.app)
        return len(rows(pilot, "#sessions")) == 2 and "70%" in text and "auto compaction" in text

    await wait_until(pilot, ready, "the overview")
    await pilot.pause(0.5)


@pytest.fixture
def data(daemon: Any) -> None:
    with daemon.client() as client:
        import_example(client)
        record_a_session(client)
        # Searches rank by meaning too once the events are embedded: the same hits in every run.
        wait_for(lambda: embedded(client), "the events are embedded")


def embedded(client: Client) -> bool:
    status = client.call("recall.status")
    return status["embedded"] is not None and status["behind"] == 0


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_overview(data: None, snap_compare: Any, size: tuple[int, int]) -> None:
    assert snap_compare(TokaApp(clock=lambda: NOW), terminal_size=size, run_before=overview_ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_session(data: None, snap_compare: Any, size: tuple[int, int]) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await overview_ready(pilot)
        pilot.app.open_session(BILLING_SESSION)  # type: ignore[attr-defined]

        def ready() -> bool:
            text = screen_text(pilot.app)
            return "usage events" in text and "events ·" in text and "seq" in text

        await wait_until(pilot, ready, "the session")
        await pilot.pause(0.5)

    assert snap_compare(TokaApp(clock=lambda: NOW), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_search(data: None, snap_compare: Any, size: tuple[int, int]) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await overview_ready(pilot)
        await pilot.press("slash")
        await pilot.pause(0.3)
        await pilot.press(*"retry", "enter")
        await wait_until(pilot, lambda: rows(pilot, "#hits"), "the hits")
        await pilot.pause(0.5)

    assert snap_compare(TokaApp(clock=lambda: NOW), terminal_size=size, run_before=run_before)
