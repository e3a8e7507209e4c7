"""The receiver's bounds keep the daemon answering: connections past otel.connection_limit are
turned away at once, a connection that does not finish its headers (or its body) within
otel.read_timeout_s is closed, and a large body is decoded off the event loop, so the
daemon's own socket answers all the while."""

from __future__ import annotations

import contextlib
import resource
import select
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from daemons import PATIENCE, spawn_daemon, wait_for
from otel_support import OtelDaemon, receiver_of, token_of

from daemon.paths import resolve_paths

CAP = 8
# Few enough files that the connections held open would exhaust them without a cap.
FILES = 64


def _few_files() -> None:  # in the daemon's process, before it starts
    resource.setrlimit(resource.RLIMIT_NOFILE, (FILES, FILES))


@pytest.fixture
def capped(tmp_path: Path) -> Iterator[OtelDaemon]:
    env = {"TOKA_OTEL_LISTEN": "127.0.0.1:0", "TOKA_OTEL_CONNECTION_LIMIT": str(CAP),
           "TOKA_OTEL_READ_TIMEOUT_S": "2"}  # fmt: skip
    paths = resolve_paths()
    daemon = spawn_daemon(paths, tmp_path / "daemon.log", env=env, preexec=_few_files)
    try:
        yield OtelDaemon(daemon, receiver_of(daemon.status(), token_of(daemon, env)))
    finally:
        daemon.stop()


def _address(otel: OtelDaemon) -> tuple[str, int]:
    host, port = otel.receiver.url.removeprefix("http://").split(":")
    return host, int(port)


def _until_closed(conn: socket.socket) -> bytes:
    """What the receiver sent before it closed the connection (fails if it never does)."""
    conn.settimeout(PATIENCE)
    received = b""
    try:
        while data := conn.recv(4096):
            received += data
    except ConnectionResetError:
        pass
    except TimeoutError:
        raise AssertionError(f"the receiver kept the connection open past {PATIENCE}s") from None
    return received


def test_connections_that_never_finish_their_headers_leave_the_socket_answering(capped: OtelDaemon) -> None:
    held = [socket.create_connection(_address(capped), timeout=PATIENCE) for _ in range(CAP + 50)]
    try:
        for conn in held:
            with contextlib.suppress(OSError):  # turned away already: what it was told is read below
                conn.sendall(b"POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n")

        status = capped.daemon.status()  # the Unix socket answers while they are all open

        assert status["otel"]["listen"] is not None
        answers = [_until_closed(conn) for conn in held]
    finally:
        for conn in held:
            conn.close()
    turned_away = [answer for answer in answers if answer]
    assert turned_away and all(answer.startswith(b"HTTP/1.1 503") for answer in turned_away)
    assert b"otel.connection_limit" in turned_away[0]
    assert len(turned_away) <= 50  # the first CAP were admitted, then closed for their headers' delay
    assert capped.daemon.status()["events"] == 0
    assert capped.daemon.log().count("Traceback") == 0


def test_a_body_that_does_not_arrive_in_time_is_answered_408_and_closed(capped: OtelDaemon) -> None:
    with socket.create_connection(_address(capped), timeout=PATIENCE) as conn:
        head = (
            "POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            f"Authorization: Bearer {capped.receiver.token}\r\nContent-Length: 1000\r\n\r\n"
        )
        conn.sendall(head.encode() + b"\x0a")
        answer = _until_closed(conn)
    assert answer.startswith(b"HTTP/1.1 408")
    assert b"otel.read_timeout_s" in answer


def _varint(number: int) -> bytes:
    out = bytearray()
    while True:
        byte, number = number & 0x7F, number >> 7
        out.append(byte | 0x80 if number else byte)
        if not number:
            return bytes(out)


def _field(number: int, content: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(content)) + content


# One attribute of a LogRecord (field 6), a KeyValue {key: "aNNNNNN", value: {string_value: "v"}}.
_ATTRIBUTE = b"\x32\x0e\x0a\x07a%06d\x12\x03\x0a\x01v"


def huge_logs_body(attributes: int) -> bytes:
    """An ExportLogsServiceRequest of one log record with ``attributes`` distinct attributes and
    no event name (decoded whole, then left out): written out field by field, since building it
    with opentelemetry-proto would take the test longer than the daemon."""
    record = b"".join(_ATTRIBUTE % n for n in range(attributes))
    return _field(1, _field(2, _field(2, record)))


def _queued(port: int, peer: int) -> int:
    """Bytes of the connection from ``peer`` to ``port`` (both loopback) that the kernel holds,
    unsent or unread, on either side (/proc/net/tcp: tx_queue and rx_queue)."""
    held = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = (int(address.split(":")[1], 16) for address in fields[1:3])
        if {local, remote} == {port, peer}:
            tx, rx = (int(queue, 16) for queue in fields[4].split(":"))
            held += tx + rx
    return held


def test_a_large_body_is_decoded_while_status_answers(start_otel: Callable[..., OtelDaemon]) -> None:
    otel = start_otel()
    body = huge_logs_body(900_000)
    assert len(body) < 16 * 1024 * 1024
    head = (
        "POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nConnection: close\r\n"
        f"Authorization: Bearer {otel.receiver.token}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    with socket.create_connection(_address(otel), timeout=PATIENCE) as conn:
        conn.sendall(head.encode() + body)
        # The daemon has read every byte of the request: from now on it decodes.
        wait_for(lambda: _queued(_address(otel)[1], conn.getsockname()[1]) == 0, "the body is read")
        answered_meanwhile = 0
        # Ask for status until the receiver answers the request: each answer came while it was
        # decoding the body.
        while not select.select([conn], [], [], 0)[0]:
            assert otel.daemon.status()["otel"]["listen"] is not None
            answered_meanwhile += 1
        answer = _until_closed(conn)
    assert answer.startswith(b"HTTP/1.1 200")
    assert answered_meanwhile >= 3
    assert otel.otel()["ignored"] == 1 and otel.daemon.status()["events"] == 0
