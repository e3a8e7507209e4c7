"""`toka usage [SESSION|AGENT]`: the headroom document hooks and scripts read."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from daemon.client import Client
from toka_cli.options import JsonOpt
from toka_cli.output import console, print_json
from toka_cli.render import key_values, percent


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
                _print_agents(agents)
            return
        figures = client.call("usage", target=target)
    if json_:
        print_json(figures)
        return
    context = "no usage recorded"
    if figures["context_tokens"] is not None:
        context = f"{figures['context_tokens']:,} of {figures['context_window']:,} tokens ({figures['fill_pct']}%)"
        if figures["window_source"] == "default":
            context += ", window assumed (model unknown)"
    until = figures["tokens_until"]
    rows = [
        ("agent" if "agent" in figures else "session", figures.get("agent") or figures["session"]),
        ("state", figures.get("state") or "-"),
        ("model", figures["model"] or "-"),
        ("context", context),
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


def _print_agents(agents: list[dict[str, Any]]) -> None:
    from toka_cli.render import table

    grid = table("agent", "state", "fill", "context", "window", "model")
    for agent in agents:
        context = "-" if agent["context_tokens"] is None else f"{agent['context_tokens']:,}"
        grid.add_row(
            agent["id"],
            agent["state"],
            percent(agent["fill_pct"]),
            context,
            f"{agent['context_window']:,}",
            agent["model"] or "-",
        )
    console().print(grid)


def register(app: typer.Typer) -> None:
    app.command()(usage)
