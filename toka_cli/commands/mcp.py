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
        raise ConfigError(MISSING_SDK, REINSTALL_SDK) from None
    run(session)


# The SDK is one of toka's dependencies: missing, it was removed after toka was installed.
MISSING_SDK = "`toka mcp` needs the MCP SDK (the mcp package), which is not installed"
REINSTALL_SDK = "pip install 'mcp>=2.3,<3' (toka depends on it; reinstalling toka brings it back too)"


def register(app: typer.Typer) -> None:
    app.command()(mcp)
