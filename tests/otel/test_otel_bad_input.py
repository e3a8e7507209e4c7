"""What the receiver refuses: each bad request a 4xx with a message, nothing of it kept, the
daemon still serving, and no good event lost."""

from __future__ import annotations

import gzip
import json
import socket
import zlib
from collections.abc import Callable

import pytest
from otel_support import Answer, OtelDaemon, api_request, encoded, logs_request

GOOD = logs_request([api_request("s", 1, "req_1", cost=0.5), api_request("s", 2, "req_2", cost=0.25)])
PROTOBUF = {"Content-Type": "application/x-protobuf"}
JSON = {"Content-Type": "application/json"}


def bomb() -> bytes:
    """A gzip body of a few KiB that inflates past the limit."""
    return gzip.compress(b"\0" * (2 * 1024 * 1024))


BAD: dict[str, tuple[str, str, bytes, dict[str, str], int, str]] = {
    "garbage": ("POST", "/v1/logs", b"hello, world", PROTOBUF, 400, "not a valid OTLP logs protobuf"),
    "truncated": ("POST", "/v1/logs", GOOD.SerializeToString()[:-7], PROTOBUF, 400, "truncated or garbage"),
    "bad json": ("POST", "/v1/logs", b'{"resourceLogs": [', JSON, 400, "not valid JSON"),
    "json of the wrong shape": ("POST", "/v1/logs", b'{"resourceLogs": 5}', JSON, 400, "must be an array"),
    "json not an object": ("POST", "/v1/logs", b"[1, 2]", JSON, 400, "must be an object"),
    "wrong content type": ("POST", "/v1/logs", b"{}", {"Content-Type": "text/plain"}, 415, "unsupported content type"),
    "no content type": ("POST", "/v1/logs", b"{}", {}, 415, "unsupported content type"),
    "bad gzip": ("POST", "/v1/logs", b"not gzip", JSON | {"Content-Encoding": "gzip"}, 400, "not valid gzip"),
    "truncated gzip": (
        "POST",
        "/v1/logs",
        gzip.compress(b'{"resourceLogs": []}')[:-12],
        JSON | {"Content-Encoding": "gzip"},
        400,
        "truncated",
    ),
    "unknown encoding": ("POST", "/v1/logs", b"{}", JSON | {"Content-Encoding": "br"}, 415, "content encoding"),
    "oversized": ("POST", "/v1/logs", b"{" + b" " * (1024 * 1024) + b"}", JSON, 413, "exceeds"),
    "oversized once inflated": (
        "POST",
        "/v1/logs",
        bomb(),
        PROTOBUF | {"Content-Encoding": "gzip"},
        413,
        "decompressed",
    ),
    "unknown path": ("POST", "/v1/profiles", b"{}", JSON, 404, "no OTLP endpoint"),
    "root path": ("POST", "/", b"{}", JSON, 404, "/v1/logs"),
    "get": ("GET", "/v1/logs", b"", JSON, 405, "POST"),
    "bad int": (
        "POST",
        "/v1/logs",
        json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [{"timeUnixNano": "soon"}]}]}]}).encode(),
        JSON,
        400,
        "not an OTLP logs request",
    ),  # fmt: skip
}


@pytest.fixture
def small_daemon(start_otel: Callable[..., OtelDaemon]) -> OtelDaemon:
    return start_otel(TOKA_OTEL_MAX_BODY_BYTES=str(1024 * 1024))


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_request_is_a_4xx_with_a_message_and_changes_nothing(small_daemon: OtelDaemon, case: str) -> None:
    method, path, body, headers, status, message = BAD[case]
    assert small_daemon.receiver.send(GOOD).status == 200
    before = small_daemon.daemon.status()["events"]

    answer: Answer = small_daemon.receiver.post(path, body, headers, method)

    assert answer.status == status
    assert message in answer.body.decode(errors="replace")
    assert small_daemon.daemon.status()["events"] == before
    assert small_daemon.receiver.send(logs_request([api_request("s", 3, "req_3", cost=0.125)])).status == 200
    assert small_daemon.report()["totals"]["calls"] == 3
    assert small_daemon.otel()["refused"] == 1


def test_an_error_is_answered_in_the_requests_encoding(otel_daemon: OtelDaemon) -> None:
    protobuf = otel_daemon.receiver.post("/v1/logs", b"\xff\xff", PROTOBUF)
    assert (protobuf.status, protobuf.content_type) == (400, "application/x-protobuf")
    assert protobuf.body[:2] == b"\x08\x03"  # google.rpc.Status code 3, INVALID_ARGUMENT
    answer = otel_daemon.receiver.post("/v1/logs", b"{", JSON)
    assert json.loads(answer.body)["code"] == 3


def test_a_chunked_body_is_read(otel_daemon: OtelDaemon) -> None:
    body, headers = encoded(GOOD, "protobuf")
    host, port = otel_daemon.receiver.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=15) as conn:
        head = "POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
        head += f"Authorization: Bearer {otel_daemon.receiver.token}\r\n"
        conn.sendall((head + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n").encode())
        for start in range(0, len(body), 100):
            chunk = body[start : start + 100]
            conn.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        conn.sendall(b"0\r\n\r\n")
        reply = b""
        while data := conn.recv(4096):
            reply += data
    assert reply.startswith(b"HTTP/1.1 200")
    assert otel_daemon.report()["totals"]["calls"] == 2


def test_deflate_bodies_are_read(otel_daemon: OtelDaemon) -> None:
    body, headers = encoded(GOOD, "json")
    answer = otel_daemon.receiver.post("/v1/logs", zlib.compress(body), headers | {"Content-Encoding": "deflate"})
    assert answer.status == 200


def test_the_bearer_token_is_required_when_set(start_otel: Callable[..., OtelDaemon]) -> None:
    daemon = start_otel(TOKA_OTEL_TOKEN="s3cret")
    body, headers = encoded(GOOD, "protobuf")

    assert daemon.receiver.post("/v1/logs", body, headers | {"Authorization": ""}).status == 401
    assert daemon.receiver.post("/v1/logs", body, headers | {"Authorization": "Bearer wrong"}).status == 401
    assert daemon.daemon.status()["events"] == 0
    assert daemon.receiver.post("/v1/logs", body, headers | {"Authorization": "Bearer s3cret"}).status == 200
    assert daemon.report()["totals"]["calls"] == 2
