"""`toka usage SESSION`: context fill against the window, and cumulative tokens."""

from __future__ import annotations

import typer

from daemon.client import Client
from toka_cli.options import JsonOpt, SessionArg
from toka_cli.output import console, print_json
from toka_cli.render import key_values


def usage(session: SessionArg, json_: JsonOpt = False) -> None:
    """How full the session's context window is (latest main-chain prompt) and what it used in all."""
    with Client() as client:
        figures = client.call("usage", session=session)
    if json_:
        print_json(figures)
        return
    context = "no usage recorded"
    if figures["context_tokens"] is not None:
        context = f"{figures['context_tokens']:,} of {figures['context_window']:,} tokens ({figures['fill_pct']}%)"
        if figures["window_source"] == "default":
            context += ", window assumed (no usage reported one)"
    rows = [
        ("session", figures["session"]),
        ("model", figures["model"] or "-"),
        ("context", context),
        ("input", f"{figures['input_tokens']:,}"),
        ("output", f"{figures['output_tokens']:,}"),
        ("cache creation", f"{figures['cache_creation_tokens']:,}"),
        ("cache read", f"{figures['cache_read_tokens']:,}"),
        ("calls", figures["calls"]),
    ]
    console().print(key_values(rows))


def register(app: typer.Typer) -> None:
    app.command()(usage)
