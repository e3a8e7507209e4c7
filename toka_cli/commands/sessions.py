"""`toka sessions` and `toka show SESSION`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from toka_cli.call import call, call_and_show
from toka_cli.completers import choices
from toka_cli.history import wait_for_history
from toka_cli.options import SOURCES, JsonOpt, LimitOpt, SessionArg, project_arg
from toka_cli.output import console, emit, print_view
from toka_cli.render import fill_line, key_values, percent, short_path, short_ts, table, top, when

if TYPE_CHECKING:
    from daemon.contract.results import Session, SessionList


def sessions(
    since: Annotated[
        str | None, typer.Option(help="Only sessions active at or after this time: ISO-8601, or an age such as 2d.")
    ] = None,
    until: Annotated[str | None, typer.Option(help="Only sessions that started before this time.")] = None,
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
    chosen = {"since": when(since), "until": when(until), "source": source, "project": project_arg(project)}
    found: SessionList = call("sessions.list", **{name: value for name, value in chosen.items() if value is not None})
    shown: SessionList = {"sessions": found["sessions"][:limit]}
    emit(shown, json_, _listed)


def _listed(found: SessionList) -> None:
    if not found["sessions"]:
        console().print("no sessions yet: record one with `toka record` or `toka import`")
        return
    grid = table("session", "source", "project", "model", "fill", "events", "last")
    for s in found["sessions"]:
        grid.add_row(
            s["session"],
            s["source"] or "-",
            short_path(s["project"]),
            s["model"] or "-",
            percent(s["fill_pct"]),
            str(s["events"]),
            short_ts(s["last_ts"]),
        )
    print_view(grid)


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
        ("agents", top(info["agents"], 10) or "-"),
        ("kinds", top(info["kinds"], 10)),
    ]
    print_view(key_values(rows))


def register(app: typer.Typer) -> None:
    app.command()(sessions)
    app.command()(show)
