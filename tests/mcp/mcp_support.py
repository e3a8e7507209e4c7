"""Driving `toka mcp` as an agent does: the SDK's stdio client starts it as a subprocess."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOKA = str(Path(sys.executable).parent / "toka")


def server_parameters(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> StdioServerParameters:
    # The subprocess gets this test's TOKA_HOME (and the rest of its environment).
    return StdioServerParameters(command=TOKA, args=["mcp", *args], env={**os.environ, **(env or {})}, cwd=cwd)


@asynccontextmanager
async def mcp_session(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    with open(os.devnull, "w") as errlog:
        parameters = server_parameters(*args, cwd=cwd, env=env)
        async with stdio_client(parameters, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")
