"""How toka shows things to people: times, sizes, one-line gists of events, tables."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from store.errors import UsageError

if TYPE_CHECKING:
    from rich.table import Table

_AGE = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|m|h|d|w)$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
# Keys whose value is the readable text of a payload, most telling first.
_TEXT_KEYS = ("text", "content", "message", "summary", "output", "command", "name", "title")


def when(value: str | None) -> str | None:
    """An ISO-8601 time, or an age (30m, 2h, 7d) counted back from now, as ISO-8601 UTC."""
    if value is None:
        return None
    match = _AGE.match(value.strip())
    if match:
        delta = timedelta(**{_UNITS[match.group(2)]: float(match.group(1))})
        return (datetime.now(UTC) - delta).isoformat().replace("+00:00", "Z")
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"cannot read {value!r} as a time", "use ISO-8601 (2026-01-31T12:00:00Z) or an age like 2h"
        ) from None
    return value


def short_ts(ts: str) -> str:
    """2026-01-31T12:00:00.123456Z -> 2026-01-31 12:00:00"""
    return ts[:19].replace("T", " ")


def short_path(path: str | None, width: int = 32) -> str:
    """A project path that fits a column: the home folder as ``~``, then its last parts."""
    if not path:
        return "-"
    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + "/")):
        path = "~" + path[len(home) :]
    if len(path) <= width:
        return path
    parts = path.rstrip("/").split("/")
    tail = parts[-1]
    for part in reversed(parts[:-1]):
        if len(part) + len(tail) + 3 > width:
            break
        tail = f"{part}/{tail}"
    return "…/" + tail if len(tail) + 2 <= width else "…" + tail[-(width - 1) :]


def percent(pct: float | None) -> str:
    return "-" if pct is None else f"{pct:.0f}%"


def gist(payload: dict[str, Any], width: int = 100) -> str:
    """One line that says what an event's payload is about."""
    text = None
    for key in _TEXT_KEYS:
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            text = value
            break
    if text is None and isinstance(payload.get("tool"), str):
        details = payload.get("input", {k: v for k, v in payload.items() if k != "tool"})
        text = f"{payload['tool']} {json.dumps(details, ensure_ascii=False, separators=(',', ':'))}"
    if text is None:
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def fill_line(figures: Mapping[str, Any]) -> str:
    """``14,170 of 200,000 tokens (7.1%)``, saying so when the window is assumed."""
    if figures.get("context_tokens") is None:
        return "no usage recorded"
    line = f"{figures['context_tokens']:,} of {figures['context_window']:,} tokens ({figures['fill_pct']}%)"
    if figures.get("window_source") == "default":
        line += ", window assumed (model unknown)"
    return line


def agents_table(agents: Sequence[Mapping[str, Any]]) -> Table:
    grid = table("agent", "state", "fill", "context", "window", "model")
    for agent in agents:
        context = "-" if agent["context_tokens"] is None else f"{agent['context_tokens']:,}"
        window = f"{agent['context_window']:,}"
        grid.add_row(agent["id"], agent["state"], percent(agent["fill_pct"]), context, window, agent["model"] or "-")
    return grid


def size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def top(counts: Mapping[str, int], n: int = 3) -> str:
    items = sorted(counts.items(), key=lambda kv: -kv[1])
    shown = ", ".join(f"{k} {v}" for k, v in items[:n])
    return shown + (f" +{len(items) - n}" if len(items) > n else "")


def table(*columns: str, title: str | None = None) -> Table:
    from rich.table import Table

    grid = Table(title=title, header_style="bold", box=None, pad_edge=False)
    for column in columns:
        grid.add_column(column, overflow="fold" if column in ("session", "gist") else "ellipsis")
    return grid


def key_values(rows: list[tuple[str, Any]]) -> Table:
    from rich.table import Table

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    for key, value in rows:
        grid.add_row(key, str(value))
    return grid
