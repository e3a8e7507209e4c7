"""`toka sessions` and `toka show SESSION`."""

from __future__ import annotations

import typer

from daemon.client.sync import Client
from toka_cli.options import JsonOpt, LimitOpt, SessionArg
from toka_cli.output import console, print_json
from toka_cli.render import fill_line, key_values, percent, short_path, short_ts, table, top


def sessions(json_: JsonOpt = False, limit: LimitOpt = None) -> None:
    """List sessions, most recently active first."""
    with Client() as client:
        found = client.call("sessions.list")["sessions"][:limit]
    if json_:
        print_json({"sessions": found})
        return
    if not found:
        console().print("no sessions yet: record one with `toka record` or `toka import`")
        return
    grid = table("session", "source", "project", "model", "fill", "events", "last")
    for s in found:
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
    with Client() as client:
        info = client.call("sessions.get", session=session)
    if json_:
        print_json(info)
        return
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
