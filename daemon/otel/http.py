"""The OTLP/HTTP endpoint: ``POST /v1/logs``, ``/v1/metrics`` and ``/v1/traces`` on
``otel.listen``, served on the daemon's own event loop by aiohttp's low-level server (an
asyncio protocol factory: no second lifecycle; it parses HTTP/1.1 with chunked bodies and
keep-alive, and this module adds the rest). What connections it admits is daemon/otel/admission.py.
A body over 64 KiB, or compressed, is inflated, decoded and mapped to events on a thread of the
receiver's own, so that a large one leaves the loop, and the daemon's socket with it, answering;
the events are then appended on the loop.

Answers follow the OTLP/HTTP specification: 200 with an export response in the request's
encoding (``partialSuccess`` counting the records not kept, and why), once the events committed;
400 for a body that does not decode, 401 without the bearer token (daemon/otel/token.py), 404
and 405 for other paths and methods, 408 for a body not sent within ``otel.read_timeout_s``,
413 past ``otel.max_body_bytes``, 415 for another content type or encoding, 503 while the log
cannot be written (the exporter retries) or past ``otel.connection_limit``. An error's body is a
``google.rpc.Status`` with the reason, and nothing of that request is kept.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from aiohttp import web

from daemon.otel.address import is_loopback, listen_address
from daemon.otel.admission import Admission
from daemon.otel.decode import JSON, PROTOBUF, decode, inflate, media_type
from daemon.otel.events import Mapped
from daemon.otel.model import SIGNALS, Decoded, Refused
from daemon.otel.receiver import Receipt, Receiver
from daemon.otel.settings import OtelSettings
from store.errors import Busy, StoreUnavailable, TokaError

log = logging.getLogger("toka.daemon")

# Each signal's partial-success count, by its JSON name.
_REJECTED = {"logs": "rejectedLogRecords", "metrics": "rejectedDataPoints", "traces": "rejectedSpans"}
# google.rpc.Code for the HTTP statuses the receiver answers with.
_RPC_CODES = {400: 3, 401: 16, 404: 5, 405: 12, 408: 4, 413: 8, 415: 3, 500: 13, 503: 14}
_READ_CHUNK = 64 * 1024
# Bodies up to this size, sent uncompressed, are decoded on the loop: at most about 10 ms, less
# than handing them to the thread costs (about 15% of the throughput of batches of 50 records).
# Larger ones, and compressed ones (whatever they inflate to), go to the thread.
INLINE_BYTES = 64 * 1024


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
    from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2

    # Only logs and metrics are ever partly rejected (traces are counted, never kept).
    if signal == "metrics":
        points = metrics_service_pb2.ExportMetricsPartialSuccess(
            rejected_data_points=receipt.rejected, error_message=receipt.message
        )
        answer = metrics_service_pb2.ExportMetricsServiceResponse(partial_success=points)
        return answer.SerializeToString()  # type: ignore[no-any-return]
    response = logs_service_pb2.ExportLogsServiceResponse(
        partial_success=logs_service_pb2.ExportLogsPartialSuccess(
            rejected_log_records=receipt.rejected, error_message=receipt.message
        )
    )
    return response.SerializeToString()  # type: ignore[no-any-return]


class OtelServer:
    def __init__(self, receiver: Receiver, settings: OtelSettings, token: str | None, token_file: Path) -> None:
        address = listen_address(settings.listen)
        assert address is not None, "the receiver starts only when otel.listen is set"
        self.host, self.port = address
        self.receiver = receiver
        self.settings = settings
        self.token = token  # None: every request is taken (otel.require_token = false)
        # Where the token is, for the refusal's hint: the config's, or the file the daemon made.
        self.token_source = "otel.token" if settings.token.strip() else str(token_file)
        self.max_body_bytes = settings.max_body_bytes
        self._told_of_token = False
        self._server: Admission | None = None
        self._listener: asyncio.Server | None = None
        # One thread: bodies are decoded one at a time, off the loop (a decode holds the GIL in
        # stretches, so a second thread would not go faster, and would hold a second body).
        self._decoder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="toka-otel")

    @property
    def listening(self) -> str | None:
        """The address bound (its real port when otel.listen asked for port 0)."""
        if self._listener is None or not self._listener.sockets:
            return None
        host, port = self._listener.sockets[0].getsockname()[:2]
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    async def start(self) -> None:
        self._server = Admission(
            self._handle,
            connection_limit=self.settings.connection_limit,
            timeout_s=self.settings.read_timeout_s,
            auto_decompress=False,
            access_log=None,
        )
        loop = asyncio.get_running_loop()
        # A backlog no longer than the limit: connections are accepted (and those past the limit
        # turned away) a limit's worth at a time, never a burst that takes the daemon's files.
        limit = self.settings.connection_limit
        self._listener = await loop.create_server(self._server.protocol, self.host, self.port, backlog=limit)
        if self.token is None:
            where = "anyone who reaches it" if not is_loopback(self.host) else "every local user"
            log.warning("otel: listening on %s without a token (otel.require_token = false): %s can write", self.host,
                        where)  # fmt: skip
        log.info("otel: receiving OTLP/HTTP on %s", self.listening)

    async def stop(self, deadline: float) -> None:
        if self._listener is not None:
            self._listener.close()
        if self._server is not None:
            await self._server.shutdown(deadline)  # in-flight requests finish, idle connections close
        if self._listener is not None:
            await self._listener.wait_closed()
        self._decoder.shutdown(wait=False, cancel_futures=True)

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        assert self._server is not None
        self._server.headers_read(request.protocol)
        media = JSON
        try:
            signal = SIGNALS.get(request.path)
            if signal is None:
                raise Refused(404, f"no OTLP endpoint at {request.path}: use /v1/logs, /v1/metrics or /v1/traces")
            if request.method != "POST":
                raise Refused(405, f"{request.method} {request.path}: OTLP requests are POSTs")
            self._authorize(request)
            media = media_type(request.headers.get("Content-Type"))
            body = await self._body(request)
            encoding = request.headers.get("Content-Encoding")
            if len(body) <= INLINE_BYTES and (encoding or "identity").strip().lower() == "identity":
                decoded, mapped = self._decode(signal, media, body, encoding)
            else:
                loop = asyncio.get_running_loop()
                decoded, mapped = await loop.run_in_executor(self._decoder, self._decode, signal, media, body, encoding)
            del body
            receipt = await self.receiver.receive(signal, decoded, mapped)
        except Refused as refused:
            return self._refuse(refused.status, refused.message, media)
        except (Busy, StoreUnavailable) as exc:
            return self._refuse(503, f"the log cannot be written now: {exc}", media)
        except TokaError as exc:
            return self._refuse(400, str(exc), media)
        return web.Response(body=_success(signal, media, receipt), content_type=media)

    def _decode(self, signal: str, media: str, body: bytes, encoding: str | None) -> tuple[Decoded, Mapped]:
        """On the decoding thread: the body inflated, decoded and mapped to events."""
        decoded = decode(signal, media, inflate(body, encoding, self.max_body_bytes))
        return decoded, self.receiver.map(signal, decoded)

    def _authorize(self, request: web.BaseRequest) -> None:
        if self.token is None:
            return
        scheme, _, given = request.headers.get("Authorization", "").strip().partition(" ")
        token = given.strip().encode(errors="surrogateescape")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token, self.token.encode()):
            if not self._told_of_token:  # once a run: an agent set up before the token is refused on every export
                self._told_of_token = True
                log.warning(
                    "otel: refused a request without the receiver's token (%s); run `toka integrate claude-code"
                    " --otel` (or codex) again to give it to the agent",
                    self.token_source,
                )
            raise Refused(
                401,
                f"missing or wrong bearer token: send 'Authorization: Bearer TOKEN' with the token in"
                f" {self.token_source}; `toka integrate claude-code --otel` and `toka integrate codex --otel` set"
                " the agents up to",
            )

    async def _body(self, request: web.BaseRequest) -> bytes:
        """The body as sent, refused past the limit before it is all read (a declared length at
        once; a chunked body as it grows), and past ``otel.read_timeout_s``."""
        limit = self.max_body_bytes
        if request.content_length is not None and request.content_length > limit:
            raise Refused(413, f"body of {request.content_length} bytes exceeds otel.max_body_bytes ({limit})")
        parts: list[bytes] = []
        size = 0
        timeout = self.settings.read_timeout_s
        try:
            async with asyncio.timeout(timeout):
                while chunk := await request.content.read(_READ_CHUNK):
                    size += len(chunk)
                    if size > limit:
                        raise Refused(413, f"body exceeds otel.max_body_bytes ({limit})")
                    parts.append(chunk)
        except TimeoutError:
            raise Refused(408, f"the body did not arrive within {timeout:g} s (otel.read_timeout_s)") from None
        return b"".join(parts)

    def _refuse(self, status: int, message: str, media: str) -> web.Response:
        self.receiver.refused += 1
        code = _RPC_CODES.get(status, 2)
        if media == PROTOBUF:
            response = web.Response(status=status, body=_status_protobuf(code, message), content_type=PROTOBUF)
        else:
            response = web.Response(
                status=status, text=json.dumps({"code": code, "message": message}), content_type=JSON
            )
        if status in (408, 413):
            response.force_close()  # the rest of the body is not read: the connection cannot serve another request
        return response
