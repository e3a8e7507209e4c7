"""The wire protocol: JSON lines over a Unix socket (docs/protocol.md).

A request is ``{"id": 1, "op": "events.append", "args": {...}}``; its answer is
``{"id": 1, "ok": true, "result": ...}`` or ``{"id": 1, "ok": false, "error": {"code",
"message", "hint"}}``. Streaming operations (``events.subscribe``, ``verify`` with progress)
send further lines with the same id: ``{"id": 1, "event": {...}}`` or ``{"id": 1,
"progress": {"done": n, "total": m}}`` before or after their answer.

This module is shared by the server and both clients and imports only the standard library
(not even ``typing``: hooks import it).
"""

from __future__ import annotations

import json

from store.errors import ProtocolError, TokaError, error_from_wire

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: hooks import this module
if TYPE_CHECKING:
    from typing import Any


# One encoder for every line: json.dumps builds a new one on each call (a third of its time).
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def encode(message: dict[str, Any]) -> bytes:
    return _ENCODER.encode(message).encode("utf-8") + b"\n"


def request(request_id: int, op: str, args: dict[str, Any]) -> bytes:
    return encode({"id": request_id, "op": op, "args": args})


def request_of_encoded(request_id: int, op: str, name: str, items: list[bytes]) -> bytes:
    """A request whose one argument ``name`` is a list of JSON values encoded already: appends
    encode each event once, to measure it (daemon/client/appends.py) and to send it."""
    head = _ENCODER.encode({"id": request_id, "op": op})[:-1]
    return f'{head},"args":{{{json.dumps(name)}:['.encode() + b",".join(items) + b"]}}\n"


def error_message(request_id: Any, error: TokaError) -> dict[str, Any]:
    return {"id": request_id, "ok": False, "error": error.to_wire()}


def decode(line: bytes) -> dict[str, Any]:
    """One line from the daemon as a message; raises ProtocolError on anything else."""
    try:
        message = json.loads(line)
    except ValueError:
        raise ProtocolError(
            "the daemon sent something that is not JSON",
            "is another program listening on toka's socket? run `toka daemon restart`",
        ) from None
    if not isinstance(message, dict):
        raise ProtocolError("the daemon sent a message that is not a JSON object")
    return message


def result_of(message: dict[str, Any]) -> Any:
    """The result of an answer, or its error raised as the matching TokaError."""
    if message.get("ok") is True:
        return message.get("result")
    if message.get("ok") is False and isinstance(message.get("error"), dict):
        raise error_from_wire(message["error"])
    raise ProtocolError("the daemon sent an answer without ok/result/error")
