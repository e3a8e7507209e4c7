"""Requests whose client has gone are not answered: a client that sends a costly request and
hangs up does not leave the daemon working for nobody while those who wait queue behind it.
A client that only closed its sending half still gets its answer."""

from __future__ import annotations

import json
import socket
import time

from daemon_support import RawConnection, Spawner, wait_for

from daemon.client.sync import Client
from daemon.paths import Paths
from store.errors import Busy, DaemonUnavailable

# Events in the log: enough that one `verify` of it takes tens of milliseconds, so that a
# thousand of them answered for nobody would keep `status` waiting for far longer than its client.
EVENTS = 6_000
ABANDONED = 1_000
STATUS_TIMEOUT = 10.0


def fill(client: Client, events: int) -> None:
    for start in range(0, events, 500):
        batch = [
            {"session": "s", "kind": "message", "payload": {"text": f"line {n} " * 8}}
            for n in range(start, start + 500)
        ]
        client.call("events.append", events=batch)


def test_status_answers_quickly_after_a_thousand_abandoned_costly_requests(paths: Paths, spawn: Spawner) -> None:
    daemon = spawn()
    with daemon.client() as client:
        fill(client, EVENTS)
    line = json.dumps({"id": 1, "op": "verify", "args": {}}).encode() + b"\n"
    for _ in range(ABANDONED):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(str(paths.socket))
        sock.sendall(line)
        sock.close()  # gone before the answer
    # Answered for nobody, the verifies would hold the reader for ABANDONED x tens of ms, and
    # their connections the daemon's every slot (daemon.max_connections) meanwhile.
    deadline = time.monotonic() + STATUS_TIMEOUT
    status = wait_for(lambda: _status_unless_busy(paths, deadline), "status answers", STATUS_TIMEOUT)
    assert status["events"] == EVENTS
    assert daemon.process.poll() is None
    with daemon.client() as client:
        assert client.call("verify")["ok"] is True


def _status_unless_busy(paths: Paths, deadline: float) -> dict[str, object] | None:
    """status, or None while the daemon still has every connection slot taken (the burst of
    connections above is accepted faster than it is served)."""
    try:
        with Client(paths, autostart=False, timeout=max(0.1, deadline - time.monotonic())) as client:
            result: dict[str, object] = client.call("status")
            return result
    except (Busy, DaemonUnavailable):  # refused: answered busy, or closed before the hello was read
        return None


def test_a_client_that_closed_only_its_sending_half_is_answered(paths: Paths, spawn: Spawner) -> None:
    daemon = spawn()
    with daemon.client() as client:
        fill(client, 1_000)
    with RawConnection(paths) as conn:
        conn.send_request(1, "verify")
        conn.sock.shutdown(socket.SHUT_WR)  # as `nc -N` does at the end of its input
        answer = conn.read()
    assert answer["ok"] is True, answer
    assert answer["result"]["events"] == 1_000
