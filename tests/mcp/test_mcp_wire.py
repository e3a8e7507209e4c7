"""`toka mcp` answers every line it is sent: a line that is not a JSON-RPC message gets a JSON-RPC
error (-32700 parse error, -32600 invalid request), and the server serves the next line."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from daemons import PATIENCE
from mcp_support import TOKA

HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}


class Server:
    """`toka mcp` in a subprocess, spoken to line by line; its answers read on a thread, so that
    a missing answer fails the test after PATIENCE instead of hanging it."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [TOKA, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.answers: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.answers.put(line)

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def answer(self) -> dict[str, Any]:
        try:
            message: dict[str, Any] = json.loads(self.answers.get(timeout=PATIENCE))
        except queue.Empty:
            raise AssertionError(f"no answer within {PATIENCE}s") from None
        return message

    def call(self, request_id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, **({"params": params} if params else {})}
        self.send(json.dumps(message).encode())
        return self.answer()


@pytest.fixture
def server() -> Iterator[Server]:
    running = Server()
    assert running.call(1, "initialize", HELLO)["result"]["serverInfo"]["name"] == "toka"
    running.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    yield running
    assert running.process.stdin is not None
    running.process.stdin.close()
    assert running.process.wait(PATIENCE) == 0


@pytest.mark.parametrize(
    ("line", "code", "request_id"),
    [
        (b"garbage", -32700, None),
        (b"\xff\xfe not utf-8", -32700, None),
        (b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"x": "\\ud800"}}', -32700, 5),
        (b'{"jsonrpc": "2.0", "id": "\\udc00", "method": "ping"}', -32700, None),
        (b'{"jsonrpc": "2.0", "id": 6, "method": 7}', -32600, 6),
        (b"[1, 2]", -32600, None),
    ],
)
def test_a_line_that_is_not_a_message_gets_an_error_and_the_server_serves_on(
    server: Server, line: bytes, code: int, request_id: int | None
) -> None:
    server.send(line)
    answer = server.answer()
    assert (answer["jsonrpc"], answer["id"], answer["error"]["code"]) == ("2.0", request_id, code)
    assert answer["error"]["message"]
    assert server.call(9, "ping") == {"jsonrpc": "2.0", "id": 9, "result": {}}
