"""The OTLP/HTTP endpoint: ``POST /v1/logs``, ``/v1/metrics`` and ``/v1/traces`` on
``otel.listen``, served on the daemon's own event loop by aiohttp's low-level server (an
asyncio protocol factory: no second lifecycle, no threads; it parses HTTP/1.1 with chunked
bodies and keep-alive, and this module adds the rest).

Answers follow the OTLP/HTTP specification: 200 with an export response in the request's
encoding (``partialSuccess`` counting the records not kept), once the events committed; 400 for
a body that does not decode, 401 without the bearer token when ``otel.token`` is set, 404 and
405 for other paths and methods, 413 past ``otel.max_body_bytes``, 415 for another content type
or encoding, 503 while the log cannot be written (the exporter retries). An error's body is a
``google.rpc.Status`` with the reason, and nothing of that request is kept.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging

from aiohttp import web

from daemon.otel.address import is_loopback, listen_address
from daemon.otel.decode import JSON, PROTOBUF, decode, inflate, media_type
from daemon.otel.model import SIGNALS, Refused
from daemon.otel.receiver import Receipt, Receiver
from store.errors import Busy, StoreUnavailable, TokaError

log = logging.getLogger("toka.daemon")

# Each signal's partial-success count, by its JSON name.
_REJECTED = {"logs": "rejectedLogRecords", "metrics": "rejectedDataPoints", "traces": "rejectedSpans"}
# google.rpc.Code for the HTTP statuses the receiver answers with.
_RPC_CODES = {400: 3, 401: 16, 404: 5, 405: 12, 413: 8, 415: 3, 500: 13, 503: 14}
_READ_CHUNK = 64 * 1024


def _varint(number: int) -> bytes:
    out = bytearray()
    while True:
        byte = number & 0x7F
        number >>= 7
        if number:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _status_protobuf(code: int, message: str) -> bytes:
    """A ``google.rpc.Status`` {code, message}: two fields, written out rather than pulling in
    googleapis-common-protos for them."""
    text = message.encode()
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text


def _success(signal: str, media: str, receipt: Receipt) -> bytes:
    if media == JSON:
        if not receipt.rejected:
            return b"{}"
        partial = {_REJECTED[signal]: str(receipt.rejected), "errorMessage": receipt.message}
        return json.dumps({"partialSuccess": partial}).encode()
    if not receipt.rejected:
        return b""
    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2

    # Only logs are ever partly rejected (records with no session to land in).
    response = logs_service_pb2.ExportLogsServiceResponse(
        partial_success=logs_service_pb2.ExportLogsPartialSuccess(
            rejected_log_records=receipt.rejected, error_message=receipt.message
        )
    )
    return response.SerializeToString()  # type: ignore[no-any-return]


class OtelServer:
    def __init__(self, receiver: Receiver, listen: str, token: str, max_body_bytes: int) -> None:
        address = listen_address(listen)
        assert address is not None, "the receiver starts only when otel.listen is set"
        self.host, self.port = address
        self.receiver = receiver
        self.token = token
        self.max_body_bytes = max_body_bytes
        self._server: web.Server | None = None
        self._listener: asyncio.Server | None = None

    @property
    def listening(self) -> str | None:
        """The address bound (its real port when otel.listen asked for port 0)."""
        if self._listener is None or not self._listener.sockets:
            return None
        host, port = self._listener.sockets[0].getsockname()[:2]
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    async def start(self) -> None:
        self._server = web.Server(self._handle, auto_decompress=False, access_log=None)
        loop = asyncio.get_running_loop()
        self._listener = await loop.create_server(self._server, self.host, self.port)
        if not is_loopback(self.host) and not self.token:
            log.warning("otel: listening on %s without otel.token: anyone who reaches it can write", self.host)
        log.info("otel: receiving OTLP/HTTP on %s", self.listening)

    async def stop(self, deadline: float) -> None:
        if self._listener is not None:
            self._listener.close()
        if self._server is not None:
            await self._server.shutdown(deadline)  # in-flight requests finish, idle connections close
        if self._listener is not None:
            await self._listener.wait_closed()

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        media = JSON
        try:
            signal = SIGNALS.get(request.path)
            if signal is None:
                raise Refused(404, f"no OTLP endpoint at {request.path}: use /v1/logs, /v1/metrics or /v1/traces")
            if request.method != "POST":
                raise Refused(405, f"{request.method} {request.path}: OTLP requests are POSTs")
            self._authorize(request)
            media = media_type(request.headers.get("Content-Type"))
            body = inflate(await self._body(request), request.headers.get("Content-Encoding"), self.max_body_bytes)
            receipt = await self.receiver.receive(signal, decode(signal, media, body))
        except Refused as refused:
            return self._refuse(refused.status, refused.message, media)
        except (Busy, StoreUnavailable) as exc:
            return self._refuse(503, f"the log cannot be written now: {exc}", media)
        except TokaError as exc:
            return self._refuse(400, str(exc), media)
        return web.Response(body=_success(signal, media, receipt), content_type=media)

    def _authorize(self, request: web.BaseRequest) -> None:
        if not self.token:
            return
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
            raise Refused(401, "missing or wrong bearer token (otel.token)")

    async def _body(self, request: web.BaseRequest) -> bytes:
        """The body as sent, refused past the limit before it is all read (a declared length at
        once; a chunked body as it grows)."""
        limit = self.max_body_bytes
        if request.content_length is not None and request.content_length > limit:
            raise Refused(413, f"body of {request.content_length} bytes exceeds otel.max_body_bytes ({limit})")
        parts: list[bytes] = []
        size = 0
        while chunk := await request.content.read(_READ_CHUNK):
            size += len(chunk)
            if size > limit:
                raise Refused(413, f"body exceeds otel.max_body_bytes ({limit})")
            parts.append(chunk)
        return b"".join(parts)

    def _refuse(self, status: int, message: str, media: str) -> web.Response:
        self.receiver.refused += 1
        code = _RPC_CODES.get(status, 2)
        if media == PROTOBUF:
            return web.Response(status=status, body=_status_protobuf(code, message), content_type=PROTOBUF)
        return web.Response(status=status, text=json.dumps({"code": code, "message": message}), content_type=JSON)
