"""Every line the client sends gets an answer: a JSON-RPC error for a line that is not a message.

The SDK's stdio transport hands a line it cannot read (not JSON, not UTF-8, a lone surrogate in
an escape, JSON that is no JSON-RPC message) to the server as an exception, which the server
logs and answers with nothing: a client waiting on the line's id would wait forever. Between the
transport and the server, :func:`answering_bad_lines` answers each such line with the error
JSON-RPC 2.0 names for it (``-32700`` parse error, ``-32600`` invalid request), with the line's
``id`` when one can be read from it, else ``null``, and lets the server serve on.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError


def _id_of(value: Any) -> str | int | None:
    """The request id a message carries, when it is one JSON-RPC allows and can be sent back."""
    if not isinstance(value, dict):
        return None
    found = value.get("id")
    if isinstance(found, bool) or not isinstance(found, str | int):
        return None
    if isinstance(found, str):
        try:
            found.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: it cannot be written back
            return None
    return found


def error_reply(exc: Exception) -> JSONRPCError:
    """The JSON-RPC error for a line the transport could not read as a message."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    unreadable = not errors or any(error["type"] == "json_invalid" for error in errors)
    # The message as read: the line itself when it is not JSON, else the object one error was in.
    inputs = [error.get("input") for error in errors]
    first = inputs[0] if inputs else None
    seen: Any = next((found for found in inputs if isinstance(found, dict) and "id" in found), first)
    if unreadable and isinstance(seen, str):
        try:  # Python's parser takes what pydantic's refuses (a lone surrogate), to find the id
            seen = json.loads(seen, parse_constant=lambda name: math.nan)
        except ValueError:
            seen = None
    if unreadable:
        error = ErrorData(code=PARSE_ERROR, message="Parse error: the line is not JSON in UTF-8")
    else:
        error = ErrorData(code=INVALID_REQUEST, message="Invalid Request: the line is not a JSON-RPC 2.0 message")
    return JSONRPCError(jsonrpc="2.0", id=_id_of(seen), error=error)


@asynccontextmanager
async def answering_bad_lines(read_stream: Any, write_stream: Any) -> AsyncIterator[Any]:
    """A read stream for the server with what ``read_stream`` brings but the lines it could not
    read, which are answered on ``write_stream`` instead."""
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

    async def relay() -> None:
        async with send:
            async for item in read_stream:
                if isinstance(item, Exception):
                    await write_stream.send(SessionMessage(error_reply(item)))
                else:
                    await send.send(item)

    async with anyio.create_task_group() as group:
        group.start_soon(relay)
        async with receive:
            yield receive
        group.cancel_scope.cancel()
