"""`toka usage [SESSION|AGENT]`: the headroom document hooks and scripts read."""

from __future__ import annotations

from typing import Annotated

import typer

from daemon.client.sync import Client
from toka_cli.options import JsonOpt
from toka_cli.output import console, print_json
from toka_cli.render import agents_table, fill_line, key_values


def usage(
    target: Annotated[
        str | None,
        typer.Argument(help="A session (its main chain) or an agent id; every agent, at risk first, when left out."),
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """How full a context window is (latest prompt), the headroom to each threshold, and the tokens used in all."""
    with Client() as client:
        if target is None:
            agents = client.call("agents.list")["agents"]
            if json_:
                print_json({"agents": agents})
            else:
                console().print(agents_table(agents))
            return
        figures = client.call("usage", target=target)
    if json_:
        print_json(figures)
        return
    until = figures["tokens_until"]
    rows = [
        ("agent" if "agent" in figures else "session", figures.get("agent") or figures["session"]),
        ("state", figures.get("state") or "-"),
        ("model", figures["model"] or "-"),
        ("context", fill_line(figures)),
        ("headroom", _tokens(figures["headroom_tokens"])),
        ("until warning", _tokens(until["warning"])),
        ("until critical", _tokens(until["critical"])),
        ("until compression", _tokens(until["compression"])),
        ("input", f"{figures['input_tokens']:,}"),
        ("output", f"{figures['output_tokens']:,}"),
        ("cache creation", f"{figures['cache_creation_tokens']:,}"),
        ("cache read", f"{figures['cache_read_tokens']:,}"),
        ("calls", figures["calls"]),
    ]
    console().print(key_values(rows))


def _tokens(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def register(app: typer.Typer) -> None:
    app.command()(usage)
