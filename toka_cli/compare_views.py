"""How `toka report session --compare telemetry` looks: per session and model, toka's price of the
requests the agent's telemetry reported beside the agent's own cost of them."""

from __future__ import annotations

from typing import Any

from toka_cli.output import console
from toka_cli.render import rich_table


def _usd(value: float | None) -> str:
    return "-" if value is None else f"${value:,.4f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}%"


def compare_table(document: dict[str, Any]) -> None:
    rows = document["rows"]
    if not rows:
        console().print("no requests reported by telemetry in this range (docs/otel.md says how to turn it on)")
        return
    grid = rich_table(
        "session", "model", "calls", "toka", "agent", "diff", "counter", title="toka's prices vs the agent's"
    )
    for row in rows:
        grid.add_row(
            row["session"],
            row["model"] or "-",
            str(row["calls"]),
            _usd(row["toka_cost_usd"]),
            _usd(row["agent_cost_usd"]),
            _pct(row["difference_pct"]),
            _usd(row["metric_cost_usd"]),
        )
    totals = document["totals"]
    grid.add_row(
        "total",
        "",
        str(totals["calls"]),
        _usd(totals["toka_cost_usd"]),
        _usd(totals["agent_cost_usd"]),
        _pct(totals["difference_pct"]),
        "",
        style="bold",
    )
    console().print(grid)
