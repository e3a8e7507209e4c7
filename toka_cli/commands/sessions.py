"""`toka sessions` and `toka show SESSION`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from toka_cli.call import call, call_and_show
from toka_cli.completers import choices
from toka_cli.history import wait_for_history
from toka_cli.options import SOURCES, TIME_HELP, JsonOpt, LimitOpt, SessionArg, project_arg
from toka_cli.output import console, emit, print_view, view_width
from toka_cli.render import (
    fill_line,
    key_values,
    percent,
    short_path,
    short_ts,
    table,
    top,
    unique_prefixes,
    when,
    zone,
)

if TYPE_CHECKING:
    from daemon.contract.results import Session, SessionList
    from daemon.contract.results_cost import Counts


def sessions(
    since: Annotated[str | None, typer.Option(help=f"Only sessions active at or after this time: {TIME_HELP}.")] = None,
    until: Annotated[
        str | None, typer.Option(help="Only sessions that started before this time, in the same forms.")
    ] = None,
    source: Annotated[
        str | None,
        typer.Option(help="Only sessions of this agent: claude-code, codex, toka.", autocompletion=choices(*SOURCES)),
    ] = None,
    project: Annotated[
        str | None,
        typer.Option(help="Only sessions run in this folder (a path, or under it) or repository (a name)."),
    ] = None,
    json_: JsonOpt = False,
    limit: LimitOpt = None,
) -> None:
    """List sessions, most recently active first."""
    wait_for_history()
    chosen = {
        "since": when(since, "--since"),
        "until": when(until, "--until"),
        "source": source,
        "project": project_arg(project),
    }
    found: SessionList = call("sessions.list", **{name: value for name, value in chosen.items() if value is not None})
    shown: SessionList = {"sessions": found["sessions"][:limit]}
    emit(shown, json_, _listed)


def _listed(found: SessionList) -> None:
    if not found["sessions"]:
        console().print("no sessions yet: record one with `toka record` or `toka import`")
        return
    grid = table("session", "source", "project", "model", "fill", "events", "last")
    for row in fitted(found["sessions"], view_width()):
        grid.add_row(*row)
    print_view(grid)


# The narrowest the project and model columns get before Rich takes over, and the gap between
# columns.
NARROWEST_PROJECT = 12
NARROWEST_MODEL = 10
GAP = 2
# The time of the last event (2026-03-14 09:32:40) to the second, to the minute, without the year.
SECOND, MINUTE, MINUTE_NO_YEAR = slice(0, 19), slice(0, 16), slice(5, 16)


def fitted(sessions: list[Session], width: int) -> list[tuple[str, ...]]:
    """The rows of `toka sessions`, made to fit ``width`` in this order: whole; the ids as their
    shortest unique prefixes (still a session's name for every command, and never wrapped); the
    times to the minute, then without the year; the projects' paths shorter; the models cut with
    an ellipsis. Rich lays out what still does not fit."""

    def rows(ids: dict[str, str], stamp: slice, project: int, model: int) -> list[tuple[str, ...]]:
        return [
            (
                ids[s["session"]],
                s["source"] or "-",
                short_path(s["project"], project),
                _cut(s["model"] or "-", model),
                percent(s["fill_pct"]),
                str(s["events"]),
                short_ts(s["last_ts"])[stamp],
            )
            for s in sessions
        ]

    def over(cells: list[tuple[str, ...]]) -> int:
        headers = ("session", "source", "project", "model", "fill", "events", "last (" + zone() + ")")
        widths = [max(len(c) for c in column) for column in zip(headers, *cells, strict=True)]
        return sum(widths) + GAP * (len(widths) - 1) - width

    whole = {s["session"]: s["session"] for s in sessions}
    models = max((len(s["model"] or "-") for s in sessions), default=1)
    cells = rows(whole, SECOND, 32, models)
    if over(cells) <= 0:
        return cells
    ids = unique_prefixes(list(whole))
    for stamp in (MINUTE, MINUTE_NO_YEAR):
        cells = rows(ids, stamp, 32, models)
        excess = over(cells)
        if excess <= 0:
            return cells
    projects = max(len(row[2]) for row in cells)
    project = min(projects, max(NARROWEST_PROJECT, projects - excess))
    excess -= projects - project
    model = max(NARROWEST_MODEL, models - max(excess, 0))
    return rows(ids, MINUTE_NO_YEAR, project, model)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def show(session: SessionArg, json_: JsonOpt = False) -> None:
    """Show one session: its counts, time span, head, agents and kinds."""
    call_and_show("sessions.get", json_, _session, session=session)


def _session(info: Session) -> None:
    rows = [
        ("session", info["session"]),
        ("events", f"{info['events']} (seq {info['first_seq']}..{info['last_seq']})"),
        ("first", info["first_ts"]),
        ("last", info["last_ts"]),
        ("head", info["head"]),
        ("source", info["source"] or "-"),
        ("project", info["project"] or "-"),
        ("model", info["model"] or "-"),
        ("context", fill_line(info)),
        ("usage", _usage_line(info["usage"])),
        ("agents", top(info["agents"], 10) or "-"),
        ("kinds", top(info["kinds"], 10)),
    ]
    print_view(key_values(rows))


def _usage_line(usage: Counts) -> str:
    """``38,766 tokens in 3 calls, $0.08``; what cost it is unknown is said so."""
    if not usage["calls"]:
        return "none recorded"
    cost = "no price known" if usage["cost_usd"] is None else f"${usage['cost_usd']:,.2f}"
    unpriced = f" ({usage['unpriced_calls']} calls unpriced)" if usage["unpriced_calls"] else ""
    return f"{usage['total_tokens']:,} tokens in {usage['calls']} calls, {cost}{unpriced}"


def register(app: typer.Typer) -> None:
    app.command()(sessions)
    app.command()(show)
