"""The connections the receiver admits, on aiohttp's low-level server.

The daemon's own socket, its database and its logs share one process's files with the
receiver's connections, so a local process that opens connections and never finishes a request
must not be able to hold them all. Two bounds:

- at most ``otel.connection_limit`` at once: a connection past them is answered 503 (with
  ``Retry-After``, which exporters honour) and closed at once;
- a connection must finish its request's headers within ``otel.read_timeout_s`` of opening,
  else it is closed; between requests on a kept-alive connection, aiohttp's keep-alive timeout
  (set to the same) closes one that starts no request or does not finish its headers. The body
  has its own deadline, where it is read (daemon/otel/http.py).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web
from aiohttp.web_protocol import RequestHandler

# google.rpc.Code UNAVAILABLE, as the receiver's other 503s say it.
_UNAVAILABLE = 14


class Admission(web.Server):
    def __init__(self, handler: Any, *, connection_limit: int, timeout_s: float, **kwargs: Any) -> None:
        super().__init__(handler, keepalive_timeout=timeout_s, **kwargs)
        self.connection_limit = connection_limit
        self.timeout_s = timeout_s
        self.admitted = 0  # connections handed to aiohttp and not yet closed
        self.turned_away = 0
        self.timed_out = 0
        self._deadlines: dict[RequestHandler, asyncio.TimerHandle] = {}
        message = (
            f"the receiver holds its most connections at once ({connection_limit}, otel.connection_limit): try again"
        )
        body = json.dumps({"code": _UNAVAILABLE, "message": message}).encode()
        self._busy = (
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
            b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
        )

    def protocol(self) -> asyncio.BaseProtocol:
        """The protocol factory the listener is created with: aiohttp's handler while there is
        room, else one that answers 503 and closes."""
        if self.admitted >= self.connection_limit:
            self.turned_away += 1
            return _TurnedAway(self._busy)
        self.admitted += 1
        return self()

    def connection_made(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
        super().connection_made(handler, transport)
        loop = asyncio.get_running_loop()
        self._deadlines[handler] = loop.call_later(self.timeout_s, self._expire, handler)

    def connection_lost(self, handler: RequestHandler, exc: BaseException | None = None) -> None:
        self.admitted -= 1
        self.headers_read(handler)
        super().connection_lost(handler, exc)

    def headers_read(self, handler: RequestHandler) -> None:
        """A request's headers arrived on ``handler``'s connection: it is no longer held to the
        deadline of its opening."""
        deadline = self._deadlines.pop(handler, None)
        if deadline is not None:
            deadline.cancel()

    def _expire(self, handler: RequestHandler) -> None:
        if self._deadlines.pop(handler, None) is not None:
            self.timed_out += 1
            handler.force_close()


class _TurnedAway(asyncio.Protocol):
    def __init__(self, answer: bytes) -> None:
        self.answer = answer

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        transport.write(self.answer)
        transport.close()  # once the answer is written
