"""`toka sessions` and `toka show SESSION`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from toka_cli.call import call, call_and_show
from toka_cli.options import JsonOpt, LimitOpt, SessionArg
from toka_cli.output import console, emit
from toka_cli.render import fill_line, key_values, percent, short_path, short_ts, table, top

if TYPE_CHECKING:
    from daemon.client.results import Session, SessionList


def sessions(json_: JsonOpt = False, limit: LimitOpt = None) -> None:
    """List sessions, most recently active first."""
    found: SessionList = call("sessions.list")
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
    console().print(grid)


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
    console().print(key_values(rows))


def register(app: typer.Typer) -> None:
    app.command()(sessions)
    app.command()(show)
