"""How toka shows things to people: times, sizes, tables (the gists of events are in gists.py)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.table import Table


def when(value: str | None, argument: str = "time") -> str | None:
    """A time in any form of daemon/contract/times.py (an age, a date, ``yesterday``, ``3 days ago``)
    as ISO-8601 UTC, the form requests carry; a date or time without an offset is local (UTC under
    ``toka --utc``)."""
    if value is None:
        return None
    import time

    from daemon.contract.times import iso_utc, moment

    return iso_utc(moment(value, time.time(), UTC if _UTC["on"] else None, argument))


# Times are shown in the local time zone (the tables name it in their time columns' headers),
# or in UTC with `toka --utc`.
_UTC = {"on": False}
# Table columns that hold times (their header gets the zone) and ids (never cut or wrapped).
TIME_COLUMNS = ("last", "when", "time", "set", "since", "first")
ID_COLUMNS = ("session", "agent", "handoff", "trace", "node", "entity")


def use_utc(on: bool) -> None:
    _UTC["on"] = on


def zone() -> str:
    """The zone times are shown in: ``UTC``, or the local zone's name (``CET``, ``+0530``)."""
    if _UTC["on"]:
        return "UTC"
    return datetime.now().astimezone().tzname() or "local"


def short_ts(ts: str) -> str:
    """2026-01-31T12:00:00.123456Z -> 2026-01-31 13:00:00 in Paris, 2026-01-31 12:00:00 in UTC."""
    try:
        moment = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return ts[:19].replace("T", " ")
    return moment.astimezone(UTC if _UTC["on"] else None).strftime("%Y-%m-%d %H:%M:%S")


def local_day(now: datetime) -> date:
    """The day ``now`` falls on in the zone times are shown in."""
    return now.astimezone(UTC if _UTC["on"] else None).date()


def day_ts(ts: str, today: date) -> str:
    """The time alone when it is ``today`` (``13:00:05``), else the day and the minute
    (``2026-01-31 13:00``): a list that stays open shows February's events as February's."""
    try:
        moment = datetime.fromisoformat(ts.replace("Z", "+00:00")).astimezone(UTC if _UTC["on"] else None)
    except ValueError:
        return ts[:16].replace("T", " ")
    return moment.strftime("%H:%M:%S") if moment.date() == today else moment.strftime("%Y-%m-%d %H:%M")


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


def unique_prefixes(names: Sequence[str], shortest: int = 8) -> dict[str, str]:
    """Each name as its shortest prefix of at least ``shortest`` characters that no other name
    starts with, which every command still takes as that name (a UUID is told apart by its first
    eight characters); a name that is another's prefix stays whole."""
    ordered = sorted(set(names))
    prefixes = {}
    for i, name in enumerate(ordered):
        neighbours = ordered[max(i - 1, 0) : i] + ordered[i + 1 : i + 2]
        common = max((_common(name, other) for other in neighbours), default=0)
        prefixes[name] = name[: max(shortest, common + 1)]
    return prefixes


def _common(a: str, b: str) -> int:
    length = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        length += 1
    return length


def percent(pct: float | None) -> str:
    return "-" if pct is None else f"{pct:.0f}%"


def fill_line(figures: Mapping[str, Any]) -> str:
    """``14,170 of 200,000 tokens (7.1%)``, saying so when the window is assumed."""
    if figures.get("context_tokens") is None:
        return "no usage recorded"
    line = f"{figures['context_tokens']:,} of {figures['context_window']:,} tokens ({figures['fill_pct']}%)"
    if figures.get("window_source") == "default":
        line += ", window assumed (model unknown)"
    return line


def compressed_line(figures: Mapping[str, Any]) -> str:
    """toka's compressed context, apart from the fill: ``52,310 tokens (26.2%), 2026-01-31 12:00:00``."""
    tokens = figures.get("compressed_tokens")
    if tokens is None:
        return "-"
    share = f" ({100 * tokens / figures['context_window']:.1f}%)" if figures.get("context_window") else ""
    when = f", {short_ts(figures['compressed_ts'])}" if figures.get("compressed_ts") else ""
    return f"{tokens:,} tokens{share}{when}"


def agents_table(agents: Sequence[Mapping[str, Any]]) -> Grid:
    """Agents with their fill (what their latest request held) and when each was last active;
    toka's compressed context in a column of its own when one was compressed."""
    compressed = any(agent.get("compressed_tokens") is not None for agent in agents)
    columns = ["agent", "state", "fill", "context", "window", "model", "last"]
    grid = table(*columns, *(["compressed"] if compressed else []))
    today = local_day(datetime.now(UTC))
    for agent in agents:
        context = "-" if agent["context_tokens"] is None else f"{agent['context_tokens']:,}"
        window = f"{agent['context_window']:,}"
        last = day_ts(agent["last_active"], today) if agent.get("last_active") else "-"
        cells = [agent["id"], agent["state"], percent(agent["fill_pct"]), context, window, agent["model"] or "-", last]
        if compressed:
            tokens = agent.get("compressed_tokens")
            cells.append("-" if tokens is None else f"{tokens:,}")
        grid.add_row(*cells)
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


def rich_table(*columns: str, title: str | None = None) -> Table:
    """A table for people: id columns keep their ids whole (a copied id must be right, and two
    agents must not look alike), other columns give way with an ellipsis; time columns name the
    zone their times are in. A Rich table, for views that style its columns, rows or sections;
    the others use :func:`table`."""
    from rich.table import Table

    class _Grid(Table):
        def add_row(self, *cells: Any, **options: Any) -> None:
            for column, cell in zip(self.columns, cells, strict=False):
                if column.no_wrap and isinstance(cell, str):
                    column.min_width = max(column.min_width or 0, len(cell))
            super().add_row(*cells, **options)

    grid = _Grid(title=title, header_style="bold", box=None, pad_edge=False)
    for column in columns:
        header = f"{column} ({zone()})" if column in TIME_COLUMNS else column
        if column in ID_COLUMNS:
            grid.add_column(header, no_wrap=True)
        else:
            grid.add_column(header, overflow="fold" if column == "gist" else "ellipsis")
    return grid


def table(*columns: str, title: str | None = None) -> Grid:
    """:func:`rich_table`'s table, with rows of text: printed as plain lines when it fits."""
    return Grid(columns, title)


def key_values(rows: list[tuple[str, Any]]) -> Grid:
    """Names in bold and their values, two columns."""
    grid = Grid(None)
    for key, value in rows:
        grid.add_row(key, str(value))
    return grid


# Characters one cell wide in every terminal, which a plain line may hold besides ASCII (Rich
# measures anything else, such as wide CJK or emoji).
_NARROW = frozenset("…·→←–—")


def _narrow(text: str) -> bool:
    return text.isprintable() and (text.isascii() or all(c.isascii() or c in _NARROW for c in text))


class Grid:
    """A table (``columns`` its headers) or, with ``columns`` None, names and values.

    Rich lays it out when it is printed with Rich (:meth:`__rich__`); :func:`toka_cli.output.show`
    writes it as plain lines instead when every cell is text that fits the width unchanged, which
    spares `toka sessions` and `toka status` importing Rich and laying out each cell (about
    60 ms). The lines are Rich's own: tests/cli/test_plain_tables.py compares the two.
    """

    def __init__(self, columns: Sequence[str] | None, title: str | None = None) -> None:
        self.columns = columns
        self.title = title
        self.rows: list[tuple[Any, ...]] = []

    def add_row(self, *cells: Any) -> None:
        self.rows.append(cells)

    def headers(self) -> list[str] | None:
        if self.columns is None:
            return None
        return [f"{column} ({zone()})" if column in TIME_COLUMNS else column for column in self.columns]

    def __rich__(self) -> Table:
        if self.columns is None:
            from rich.table import Table

            pairs = Table.grid(padding=(0, 2))
            pairs.add_column(style="bold")
            pairs.add_column()
            for row in self.rows:
                pairs.add_row(*row)
            return pairs
        grid = rich_table(*self.columns, title=self.title)
        for row in self.rows:
            grid.add_row(*row)
        return grid

    def plain_lines(self, width: int, bold: Callable[[str], str]) -> list[str] | None:
        """The lines Rich would print, each bold part passed through ``bold``; None when Rich
        must lay it out (a cell that is not plain text, a title, or a row wider than ``width``)."""
        headers = self.headers()
        count = len(headers) if headers is not None else 2
        if self.title is not None or any(len(row) > count for row in self.rows):
            return None
        rows = [tuple(row) + ("",) * (count - len(row)) for row in self.rows]
        cells = [*([tuple(headers)] if headers is not None else []), *rows]
        if not all(isinstance(cell, str) and _narrow(cell) for row in cells for cell in row):
            return None
        widths = [max(len(row[i]) for row in cells) for i in range(count)] if cells else [0] * count
        if sum(widths) + 2 * (count - 1) > width:
            return None
        lines = []
        if headers is not None:
            lines.append("".join(bold(self._cell(headers, i, widths)) for i in range(count)))
        for row in rows:
            if headers is None:  # names in bold, with the gap after them
                lines.append(bold(self._cell(row, 0, widths)) + self._cell(row, 1, widths))
            else:
                lines.append("".join(self._cell(row, i, widths) for i in range(count)))
        return lines

    @staticmethod
    def _cell(row: Sequence[str], i: int, widths: list[int]) -> str:
        """A cell padded to its column, with the gap to the next column (none after the last)."""
        return row[i].ljust(widths[i]) + ("  " if i < len(widths) - 1 else "")
