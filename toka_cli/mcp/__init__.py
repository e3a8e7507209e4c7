"""`toka mcp`: toka's memory as Model Context Protocol tools, resources and prompts, over stdio.

A thin client of the daemon (``daemon.client.aio``): every tool is one daemon op, so the server
holds no state it cannot rebuild and never opens the store. The official SDK (``mcp``) is heavy
(pydantic, anyio, starlette), so only this package imports it and only `toka mcp` imports this
package: `toka.entry` dispatches to :func:`toka_cli.mcp.server.main` before Typer loads.

- :mod:`toka_cli.mcp.link`: the daemon connection, the current session, errors as tool errors.
- :mod:`toka_cli.mcp.tools`: the tools (search, recall, memory_*, note, context, handoff, usage).
- :mod:`toka_cli.mcp.resources`: ``toka://`` resources and the ``continue-from-handoff`` prompt.
- :mod:`toka_cli.mcp.server`: the server assembled, and the command's entry point.
"""
