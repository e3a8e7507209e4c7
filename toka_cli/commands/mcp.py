"""`toka mcp`: the MCP server. The SDK is imported inside the command, so no other command loads it."""

from __future__ import annotations

from typing import Annotated

import typer

from store.errors import ConfigError


def mcp(
    session: Annotated[
        str | None,
        typer.Option(
            help="The session the tools act on when a call names none (default: $TOKA_SESSION, else the latest "
            "session recorded in this directory, else the latest).",
        ),
    ] = None,
) -> None:
    """Serve toka's memory to an agent over the Model Context Protocol (stdio): tools, resources, a prompt.

    Run by the agent (`toka integrate claude-code` or `toka integrate codex` installs it); it exits when the
    agent closes its stdin. See docs/mcp.md.
    """
    try:
        from toka_cli.mcp.server import run
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] not in ("mcp", "mcp_types", "pydantic", "anyio"):
            raise
        raise ConfigError("`toka mcp` needs the MCP SDK, which is not installed", "pip install 'toka[mcp]'") from None
    run(session)


def register(app: typer.Typer) -> None:
    app.command()(mcp)
