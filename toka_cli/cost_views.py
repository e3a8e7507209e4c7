"""How cost reports look: a table for people (80 columns, ids whole), CSV for spreadsheets, markdown
for pull requests. The JSON (``--json``) is the daemon's document as it is (docs/json.md)."""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from store.errors import UsageError
from toka_cli.output import console
from toka_cli.render import rich_table, short_path

if TYPE_CHECKING:
    from daemon.contract.results_cost import Counts, Report

FORMATS = ("table", "csv", "markdown")
# The counts of a row as CSV and markdown give them, in order.
COLUMNS = (
    "calls",
    "input_tokens",
    "output_tokens",
    "cache_creation_tokens",
    "cache_creation_1h_tokens",
    "cache_read_tokens",
    "total_tokens",
    "cost_usd",
    "unpriced_calls",
)
SESSION_COLUMNS = ("session", "source", "project", "first_ts", "last_ts")
BLOCK_COLUMNS = ("start", "end", "active")


def compact(n: int) -> str:
    """A token count in at most six characters: 950, 12.3k, 4.5M, 1.2B."""
    for size, unit in ((1_000_000_000, "B"), (1_000_000, "M"), (1_000, "k")):
        if n >= size:
            value = n / size
            return f"{value:.1f}{unit}" if value < 100 else f"{value:.0f}{unit}"
    return str(n)


def dollars(counts: Counts | Mapping[str, Any]) -> str:
    """``$12.34``; ``$12.34*`` when some calls had no price; ``unpriced`` when none had."""
    cost = counts["cost_usd"]
    if cost is None:
        return "unpriced"
    shown = f"${cost:,.2f}" if cost >= 0.01 or cost == 0 else "<$0.01"
    return shown + ("*" if counts["unpriced_calls"] else "")


def report_view(fmt: str) -> Callable[[Report], None]:
    """The renderer of ``--format fmt`` (the table of periods and sessions; block_views.py has
    the blocks')."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", f"use one of: {', '.join(FORMATS)} (or --json)")
    return {"table": _table, "csv": _csv, "markdown": _markdown}[fmt]


def _label(report: Report) -> str:
    return "session" if report["report"] == "session" else report["report"].removesuffix("ly").replace("dai", "day")


def title(report: Report) -> str:
    span = {
        (True, True): "",
        (False, True): f", from {report['since']}",
        (True, False): f", until {report['until']}",
        (False, False): f", {report['since']} to {report['until']}",
    }[(report["since"] is None, report["until"] is None)]
    chosen = "".join(f", {name} {report[name]}" for name in ("source", "project") if report[name])
    return f"{report['report'].capitalize()} usage, time zone {report['timezone']}{span}{chosen}"


def caption(report: Report) -> str:
    prices = report["prices"]
    line = f"prices: {prices['table']}" + (f" (config: {', '.join(prices['config'])})" if prices["config"] else "")
    totals = report["totals"]
    if totals["unpriced_calls"]:
        names = ", ".join(m or "no model named" for m in totals["unpriced_models"])
        calls = totals["unpriced_calls"]
        line += f"\n* {calls:,} call{'s' if calls != 1 else ''} of unpriced models ({names}): not in the cost"
    return line


# The table's columns past the first: (header, cell). A session's id takes 36 columns of 80,
# so its table shows fewer counts; CSV, markdown and JSON have them all.
PERIOD_CELLS = ("calls", "input", "output", "cache w", "cache r", "total", "cost")
SESSION_CELLS = ("calls", "output", "total", "cost")
_CELLS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "calls": lambda counts: f"{counts['calls']:,}",
    "input": lambda counts: compact(counts["input_tokens"]),
    "output": lambda counts: compact(counts["output_tokens"]),
    "cache w": lambda counts: compact(counts["cache_creation_tokens"]),
    "cache r": lambda counts: compact(counts["cache_read_tokens"]),
    "total": lambda counts: compact(counts["total_tokens"]),
    "cost": dollars,
}
# The first column's width: a session id (a UUID), or what the period columns leave of 80.
SESSION_WIDTH = 36
PERIOD_WIDTH = 18


def _table(report: Report) -> None:
    from rich.text import Text

    sessions = report["report"] == "session"
    cells = SESSION_CELLS if sessions else PERIOD_CELLS
    grid = rich_table("session" if sessions else _label(report), *cells, title=title(report))
    grid.caption = caption(report)
    for column in grid.columns[1:]:
        column.justify = "right"
    rows = cast(list[dict[str, Any]], report["rows"])
    # A model's name is one line, whole where the width allows it (cut with an ellipsis on a
    # terminal too narrow): the label column is as wide as the longest, up to the session id's.
    names = [len(_model(line)) for row in rows for line in row.get("breakdown", ())]
    grid.columns[0].overflow = "fold"
    grid.columns[0].max_width = max(
        SESSION_WIDTH if sessions else PERIOD_WIDTH, min(max(names, default=0), SESSION_WIDTH)
    )
    for row in rows:
        label: Any = row["period"] if not sessions else Text(row["session"] + "\n") + Text(_origin(row), style="dim")
        grid.add_row(label, *(_CELLS[name](row) for name in cells))
        for line in row.get("breakdown", ()):
            model = Text(_model(line), style="dim", no_wrap=True, overflow="ellipsis")
            grid.add_row(model, *(_CELLS[name](line) for name in cells), style="dim")
    grid.add_section()
    totals = cast(dict[str, Any], report["totals"])
    grid.add_row(Text("total", style="bold"), *(_CELLS[name](totals) for name in cells), style="bold")
    console().print(grid)


def _model(line: Mapping[str, Any]) -> str:
    return "  " + (line["model"] or "(no model)")


def _origin(row: Mapping[str, Any]) -> str:
    """``codex · ~/work/app · 2026-05-11`` in a session id's width."""
    day = (row["last_ts"] or "")[:10]
    room = SESSION_WIDTH - len(row["source"]) - len(day) - 6
    return f"{row['source']} · {short_path(row['project'], max(room, 8))} · {day}"


def _label_columns(report: Report) -> tuple[str, ...]:
    return {"session": SESSION_COLUMNS, "blocks": BLOCK_COLUMNS}.get(report["report"], ("period",))


def _flat_rows(report: Report) -> Iterator[tuple[list[str], Mapping[str, Any]]]:
    """(label cells, counts) per row, per model of a row when broken down, and the totals."""
    columns = _label_columns(report)
    broken = any("breakdown" in row for row in report["rows"])
    for row in cast(list[dict[str, Any]], report["rows"]):
        label = [str(row[name]).lower() if isinstance(row[name], bool) else str(row[name] or "") for name in columns]
        if broken:
            for line in row["breakdown"]:
                yield [*label, line["model"] or ""], line
        else:
            yield label, row
    blank = [""] * (len(columns) - 1) + ([""] if broken else [])
    yield ["total", *blank], cast(Mapping[str, Any], report["totals"])


def _header(report: Report) -> list[str]:
    labels = list(_label_columns(report))
    if any("breakdown" in row for row in report["rows"]):
        labels.append("model")
    return [*labels, *COLUMNS]


def _csv(report: Report) -> None:
    """A row per period (per period and model with --breakdown) and the totals; each row names
    the price table its cost comes from, so a figure pasted elsewhere still says it."""
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow([*_header(report), "price_table"])
    table = report["prices"]["table"] + (" + config" if report["prices"]["config"] else "")
    for label, counts in _flat_rows(report):
        cost = counts["cost_usd"]
        values = [counts[name] for name in COLUMNS]
        values[COLUMNS.index("cost_usd")] = "" if cost is None else f"{cost:.6f}"
        writer.writerow([*label, *values, table])


def _markdown(report: Report) -> None:
    header = _header(report)
    numbers = len(COLUMNS)
    lines = [
        f"**{title(report)}**",
        "",
        "| " + " | ".join(header) + " |",
        "| " + " | ".join(["---"] * (len(header) - numbers) + ["---:"] * numbers) + " |",
    ]
    for label, counts in _flat_rows(report):
        cells = [f"{counts[name]:,}" for name in COLUMNS if name != "cost_usd"]
        cells.insert(COLUMNS.index("cost_usd"), dollars(counts))
        if label[0] == "total":
            label = ["**total**", *label[1:]]
        lines.append("| " + " | ".join([*(cell.replace("|", "\\|") for cell in label), *cells]) + " |")
    lines += ["", caption(report).replace("\n", "  \n")]
    sys.stdout.write("\n".join(lines) + "\n")
