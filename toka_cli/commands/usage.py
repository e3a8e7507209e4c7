"""`toka usage [SESSION|AGENT]`: the headroom document hooks and scripts read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from toka_cli.call import call_and_show
from toka_cli.commands.agent import agents_view
from toka_cli.completers import complete_targets
from toka_cli.options import JsonOpt
from toka_cli.output import print_view
from toka_cli.render import compressed_line, fill_line, key_values

if TYPE_CHECKING:
    from daemon.contract.results import Usage


def usage(
    target: Annotated[
        str | None,
        typer.Argument(
            help="A session or a prefix of one (its main agent), or an agent (SESSION/NAME, or its id);"
            " every agent, at risk first, when left out.",
            autocompletion=complete_targets,
        ),
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """How full a context window is (latest prompt), the headroom to each threshold, and the tokens used in all."""
    if target is None:
        call_and_show("agents.list", json_, agents_view)
    else:
        call_and_show("usage", json_, _headroom, target=target)


def _headroom(figures: Usage) -> None:
    until = figures["tokens_until"]
    rows = [
        ("agent", figures["agent"]),
        ("state", figures.get("state") or "-"),
        ("model", figures["model"] or "-"),
        ("context", fill_line(figures)),
        ("toka's compressed context", compressed_line(figures)),
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
    print_view(key_values(rows))


def _tokens(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def register(app: typer.Typer) -> None:
    app.command()(usage)
