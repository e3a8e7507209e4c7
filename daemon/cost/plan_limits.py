"""Codex's own plan limits, as Codex reports them: each ``token_count`` of a rollout carries
``rate_limits`` (shared/docs/agent-formats.md, 3.3), which the importer keeps in the usage event it
writes: a ``primary`` window (5 hours) and a ``secondary`` one (a week), each with the share used
(``used_percent``), its length (``window_minutes``) and when it starts over (``resets_at``, epoch
seconds; older builds ``resets_in_seconds`` from the reading).

Codex's usage is not drawn into Claude's 5-hour billing blocks (daemon/cost/blocks.py): its
limits are these windows. The latest reading of the latest Codex session is the one shown, with
its burn rate (the share used over the time the window has run, as a block's burn rate is its
use over its time) and when the window runs out at that rate, if before it starts over.
"""

from __future__ import annotations

from typing import Any

from store.base import EventQuery, EventStore
from store.events import Event, format_ts

CODEX = "codex"
WINDOWS = ("primary", "secondary")
# Codex sessions looked into, the latest first, and usage events read back in each, for a reading.
SESSIONS_READ = 5
EVENTS_READ = 50
HOUR_US = 3600 * 1_000_000


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def window_json(name: str, window: dict[str, Any], read_at: int, now: int) -> dict[str, Any] | None:
    """One window of a reading: used, when it resets, the burn rate and when it runs out."""
    used, minutes = _number(window.get("used_percent")), _number(window.get("window_minutes"))
    if used is None or not minutes:
        return None
    resets_at = None
    if (at := _number(window.get("resets_at"))) is not None:
        resets_at = int(at * 1_000_000)
    elif (left := _number(window.get("resets_in_seconds"))) is not None:
        resets_at = read_at + int(left * 1_000_000)
    burn = runs_out = None
    if resets_at is not None:
        elapsed = read_at - (resets_at - int(minutes * 60 * 1_000_000))
        if elapsed > 0 and used > 0:
            burn = used / (elapsed / HOUR_US)
            out = read_at + int((100 - used) / burn * HOUR_US)
            runs_out = format_ts(out) if out < resets_at else None
    return {
        "name": name,
        "window_minutes": int(minutes),
        "used_pct": round(used, 1),
        "resets_at": None if resets_at is None else format_ts(resets_at),
        "reset": resets_at is not None and now >= resets_at,  # started over since the reading
        "burn_pct_per_hour": None if burn is None else round(burn, 2),
        "runs_out_at": runs_out,
    }


def reading_json(event: Event, now: int) -> dict[str, Any] | None:
    """A usage event's ``rate_limits`` as Codex's plan limits, or None when it carries none."""
    limits = event.payload.get("rate_limits")
    if not isinstance(limits, dict):
        return None
    windows = [
        found
        for name in WINDOWS
        if isinstance(limits.get(name), dict) and (found := window_json(name, limits[name], event.ts, now))
    ]
    if not windows:
        return None
    return {
        "source": CODEX,
        "session": event.session,
        "as_of": format_ts(event.ts),
        "limit_id": limits.get("limit_id"),
        "plan_type": limits.get("plan_type"),
        "windows": windows,
    }


async def codex_limits(store: EventStore, codex_sessions: set[str], now: int) -> dict[str, Any] | None:
    """Codex's limit windows from the latest reading in its latest sessions, or None."""
    if not codex_sessions:
        return None
    latest = [info.session for info in await store.sessions() if info.session in codex_sessions]
    for session in latest[:SESSIONS_READ]:
        query = EventQuery(session=session, kinds=("usage",), order="desc", limit=EVENTS_READ)
        for event in await store.query(query):
            found = reading_json(event, now)
            if found is not None:
                return found
    return None
