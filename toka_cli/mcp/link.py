"""The MCP server's one connection to the daemon, the current session, and toka's errors as
MCP tool errors.

One :class:`~daemon.client.aio.AsyncClient`, opened (and the daemon autostarted) on the first
call. When the daemon goes away mid-call the call fails with a tool error naming why, the
connection is dropped, and the next call opens a new one (starting a daemon again when none
runs): the server itself never dies of it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from daemon.client.aio import AsyncClient
from store.errors import DaemonUnavailable, NotFound, TokaError, UsageError

# The environment variable an MCP client's config may set to pin the session (Claude Code and
# Codex pass no session id to MCP servers; their hooks carry it into the log instead).
SESSION_VARIABLE = "TOKA_SESSION"
# The sessions toka keeps for itself (memory writes go to `toka.memory`): never an agent's.
INTERNAL_PREFIX = "toka."


def tool_error(exc: TokaError) -> ToolError:
    """``error: message`` and ``hint: ...``, as the CLI prints them, for the agent to act on."""
    return ToolError(exc.lines().strip())


@dataclass
class Link:
    """The daemon as the tools see it: :meth:`call` an op, :meth:`session` the one to act on."""

    session_hint: str | None = None  # `toka mcp --session`, else $TOKA_SESSION
    cwd: Path = field(default_factory=Path.cwd)
    _client: AsyncClient | None = None

    async def _connected(self) -> AsyncClient:
        if self._client is None:
            client = AsyncClient()
            await client.connect()
            self._client = client
        return self._client

    async def raw_call(self, op: str, **args: Any) -> Any:
        """One op's result; toka's errors raised as they are. Args given as None are not sent."""
        given = {name: value for name, value in args.items() if value is not None}
        client = await self._connected()
        try:
            return await client.call(op, **given)
        except (DaemonUnavailable, OSError):
            await self.close()
            raise

    async def call(self, op: str, **args: Any) -> Any:
        """One op's result, toka's errors turned into MCP tool errors."""
        try:
            return await self.raw_call(op, **args)
        except OSError as exc:
            raise tool_error(DaemonUnavailable(f"lost the daemon: {exc}", "retry; see `toka daemon logs`")) from None
        except TokaError as exc:
            raise tool_error(exc) from None

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    async def session(self, given: str | None) -> str:
        """The session a tool acts on: its ``session`` argument, else `toka mcp --session` (or
        $TOKA_SESSION), else the most recently active session recorded in this working directory
        (an agent starts its MCP servers in its project, and its hooks record the session's
        directory), else the most recently active one. Never one of toka's own sessions
        (``toka.*``, where memory writes go): a tool error asking for the ``session`` argument
        when there is no other."""
        chosen = given or self.session_hint or os.environ.get(SESSION_VARIABLE) or None
        if chosen is not None:
            return chosen
        listed = (await self.call("sessions.list"))["sessions"]
        agents = [entry for entry in listed if not str(entry["session"]).startswith(INTERNAL_PREFIX)]
        mine = [entry for entry in agents if entry.get("project") == str(self.cwd)] or agents
        if mine:
            return str(mine[0]["session"])
        raise tool_error(
            NotFound(
                "no agent session recorded yet: toka's own sessions (toka.*) take no notes",
                "pass the `session` argument, or start the server with `toka mcp --session ID` (or"
                " TOKA_SESSION); `toka integrate claude-code` records an agent's sessions as they start",
            )
        )


def require(condition: bool, message: str, hint: str | None = None) -> None:
    """A bad argument the daemon would not catch: an error result, not a crash."""
    if not condition:
        raise tool_error(UsageError(message, hint))
