"""How `toka report blocks` looks for people: a table of Claude's 5-hour blocks in the report's
time zone, the active block's use, burn rate and projection beneath it, and Codex's own limit
windows as bars."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import TYPE_CHECKING, Any, cast

from toka_cli.cost_views import caption, compact, dollars, title
from toka_cli.output import print_view
from toka_cli.render import key_values, rich_table

if TYPE_CHECKING:
    from daemon.contract.results_cost import Report


def zone(name: str) -> tzinfo:
    """The zone a report names: ``UTC``, ``UTC+05:30``, or an IANA name."""
    if name == "UTC":
        return UTC
    if name.startswith("UTC") and len(name) == 9:
        sign = -1 if name[3] == "-" else 1
        return timezone(sign * timedelta(hours=int(name[4:6]), minutes=int(name[7:9])))
    from zoneinfo import ZoneInfo

    return ZoneInfo(name)


def local(ts: str, where: tzinfo) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).astimezone(where)


def _left(minutes: float) -> str:
    hours, rest = divmod(int(minutes), 60)
    return f"{hours}h {rest:02d}m left" if hours else f"{rest}m left"


def _share(pct: float | None, limit: str) -> str:
    return "" if pct is None else f" ({pct:.0f}% of {limit})"


def blocks_table(report: Report) -> None:
    where = zone(report["timezone"])
    limits = cast(Mapping[str, Any], cast(Any, report).get("limits") or {})
    grid = rich_table("block", "calls", "total", "cost", "used", "", title=title(report))
    grid.caption = caption(report)
    for column in grid.columns[1:5]:
        column.justify = "right"
    active = None
    for row in cast(list[dict[str, Any]], report["rows"]):
        start = local(row["start"], where)
        shares = [p for p in (row["limits"]["token_pct"], row["limits"]["cost_pct"]) if p is not None]
        used = f"{max(shares):.0f}%" if shares else ""
        state = "active" if row["active"] else ""
        grid.add_row(start.strftime("%Y-%m-%d %H:%M"), f"{row['calls']:,}", compact(row["total_tokens"]),
                     dollars(row), used, state)  # fmt: skip
        if row["active"]:
            active = row
    totals = cast(dict[str, Any], report["totals"])
    grid.add_section()
    grid.add_row("total", f"{totals['calls']:,}", compact(totals["total_tokens"]), dollars(totals), "", "")
    print_view(grid)
    if active is not None:
        print_view(key_values(active_lines(active, where, limits)))
    codex = cast(Mapping[str, Any] | None, cast(Any, report).get("codex"))
    if codex:
        now = local(cast(Any, report)["now"], where)
        print_view(key_values(plan_lines(codex, where, now)))


# Characters of a plan window's bar.
BAR_WIDTH = 20
WINDOW_NAMES = {300: "5-hour", 10080: "weekly"}


def bar(pct: float, width: int = BAR_WIDTH) -> str:
    """``█████░░░░░░░░░░░░░░░``: ``pct`` of ``width``."""
    filled = max(0, min(width, round(pct / 100 * width)))
    return "█" * filled + "░" * (width - filled)


def window_name(window: Mapping[str, Any]) -> str:
    minutes = window["window_minutes"]
    return WINDOW_NAMES.get(minutes) or (f"{minutes // 60}-hour" if minutes % 60 == 0 else f"{minutes}-minute")


def window_words(window: Mapping[str, Any], where: tzinfo, now: datetime) -> tuple[str, str]:
    """What a bar does not say, in two parts that fit 80 columns beside it: when the window starts
    over, and when it runs out at the burn rate."""
    if window["resets_at"] is None:
        return "reset time unknown", ""
    resets = local(window["resets_at"], where)
    if window["reset"]:
        return f"started over at {_at(resets, now)}", "use since then unknown"
    left = (resets - now).total_seconds() / 60
    burn = window["burn_pct_per_hour"]
    if burn is None:
        return f"resets {_at(resets, now)}", _left(max(left, 0))
    runs_out = window["runs_out_at"]
    end = f"runs out {_at(local(runs_out, where), now)}" if runs_out else "lasts until it resets"
    return f"resets {_at(resets, now)}", f"{_left(max(left, 0))}; at {burn:g}%/h {end}"


def _at(moment: datetime, now: datetime) -> str:
    """The time alone on ``now``'s day, else the day too."""
    return f"{moment:%H:%M}" if moment.date() == now.date() else f"{moment:%Y-%m-%d %H:%M}"


def plan_lines(codex: Mapping[str, Any], where: tzinfo, now: datetime) -> list[tuple[str, Any]]:
    """Codex's limit windows, each a bar of its use and when it resets and runs out."""
    read = local(codex["as_of"], where)
    lines: list[tuple[str, Any]] = [("codex limits", f"as of {read:%Y-%m-%d %H:%M} (session {codex['session'][:8]})")]
    for window in codex["windows"]:
        resets, runs_out = window_words(window, where, now)
        lines.append(
            (f"codex {window_name(window)}", f"{bar(window['used_pct'])} {window['used_pct']:5.1f}%  {resets}")
        )
        if runs_out:
            lines.append(("", runs_out))
    return lines


def active_lines(block: Mapping[str, Any], where: tzinfo, limits: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The active block in a few lines: its hours and time left, use, burn rate and projection."""
    start, end = local(block["start"], where), local(block["end"], where)
    token_limit = f"{compact(limits['token_limit'])} tokens" if limits.get("token_limit") else ""
    cost_limit = f"${limits['cost_limit']:,.2f}" if limits.get("cost_limit") else ""
    shares = block["limits"]
    lines: list[tuple[str, Any]] = [
        ("active block", f"{start:%H:%M}–{end:%H:%M} ({_left(block['remaining_minutes'])})"),
        (
            "used",
            f"{compact(block['total_tokens'])} tokens{_share(shares['token_pct'], token_limit)},"
            f" {dollars(block)}{_share(shares['cost_pct'], cost_limit)}",
        ),
    ]
    burn, projected = block["burn_rate"], block["projection"]
    if burn is not None:
        per_hour = "" if burn["cost_per_hour"] is None else f", ${burn['cost_per_hour']:,.2f}/h"
        lines.append(("burn rate", f"{compact(round(burn['tokens_per_minute']))} tokens/min{per_hour}"))
    if projected is not None:
        cost = "" if projected["cost_usd"] is None else f", ${projected['cost_usd']:,.2f}"
        lines.append(
            (
                f"at {end:%H:%M}",
                f"{compact(projected['total_tokens'])} tokens{_share(shares['projected_token_pct'], token_limit)}"
                f"{cost}{_share(shares['projected_cost_pct'], cost_limit)}",
            )
        )
    return lines


def summary_view(summary: Mapping[str, Any]) -> Any:
    """The live summary: today's cost, the active block, each agent's share of today."""
    from rich.console import Group
    from rich.text import Text

    where = zone(summary["timezone"])
    now = local(summary["now"], where)
    today = summary["today"]
    head = Text(f"{now:%Y-%m-%d %H:%M:%S} {summary['timezone']}", style="bold")
    lines: list[Any] = [
        head,
        Text(f"today  {dollars(today)} · {compact(today['total_tokens'])} tokens · {today['calls']:,} calls"),
    ]
    block = summary["block"]
    if block is None:
        lines.append(Text("no active 5-hour block"))
    else:
        lines.append(key_values(active_lines(block, where, block["limits"])))
    if summary.get("codex"):
        lines.append(key_values(plan_lines(summary["codex"], where, now)))
    if summary["agents"]:
        grid = rich_table("agent", "source", "calls", "total", "cost", title="today, per agent")
        for column in grid.columns[2:]:
            column.justify = "right"
        grid.columns[0].overflow = "fold"
        for agent in summary["agents"][:10]:
            name = f"{agent['session']}/{agent['agent'] or '-'}"
            grid.add_row(name, agent["source"], f"{agent['calls']:,}", compact(agent["total_tokens"]), dollars(agent))
        lines.append(grid)
    lines.append(Text(f"prices: {summary['prices']['table']}", style="dim"))
    return Group(*lines)
