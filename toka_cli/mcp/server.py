"""The MCP server assembled from the tools and resources, run over stdio until stdin closes."""

from __future__ import annotations

from importlib.metadata import version

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

from toka_cli.mcp import resources, tools
from toka_cli.mcp.link import Link
from toka_cli.mcp.wire import answering_bad_lines

INSTRUCTIONS = (
    "toka is this agent's memory: everything the agent did is in an event log. Use `recall` or `search` before "
    "redoing work, `memory_set`/`memory_get` for facts worth keeping across sessions, `note` to record decisions, "
    "to-dos and errors for the next agent, `usage` to see how much context is left, and `handoff` when it runs out."
)


def build(link: Link) -> MCPServer:
    server: MCPServer = MCPServer("toka", version=version("toka"), instructions=INSTRUCTIONS, log_level="WARNING")
    tools.register(server, link)
    resources.register(server, link)
    return server


async def serve(link: Link) -> None:
    """MCPServer.run_stdio_async, with each line that is not a message answered (wire.py)."""
    lowlevel = build(link)._lowlevel_server  # what run_stdio_async runs; the SDK names no other way in
    try:
        async with stdio_server() as (source, sink), answering_bad_lines(source, sink) as read:
            await lowlevel.run(read, sink, lowlevel.create_initialization_options())
    finally:
        await link.close()


def run(session: str | None) -> None:
    """Serve until the client closes stdin."""
    anyio.run(serve, Link(session_hint=session))
