"""Helpers for the daemon suite: real daemons in child processes, raw connections, a fake peer
(tests/daemons.py).

Nothing here stands in for toka's own code. A daemon is ``python -m daemon`` in a child process
on a real socket; a raw connection is a plain AF_UNIX socket, for the bytes no client would send;
the fake peer is another program listening on toka's socket, as an old daemon would be.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Self

from daemons import (  # noqa: F401 - re-exported
    PATIENCE,
    FakePeer,
    Spawned,
    Spawner,
    daemon_command,
    spawn_daemon,
    wait_for,
)

from daemon.client.sync import Client
from daemon.paths import Paths


def run_daemon_to_exit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run a daemon that is expected to refuse to start; its exit code and stderr."""
    return subprocess.run(
        daemon_command(*args),
        check=False,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        env={**os.environ, **(env or {})},
    )


def write_config(paths: Paths, text: str) -> None:
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text(text, encoding="utf-8")


def refuses_connections(paths: Paths) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.connect(str(paths.socket))
        except (ConnectionRefusedError, FileNotFoundError):
            return True
        return False


class RawConnection:
    """A bare socket to the daemon: sends any bytes, reads answers as parsed JSON lines."""

    def __init__(self, paths: Paths, timeout: float = PATIENCE) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(paths.socket))
        self.reader = self.sock.makefile("rb")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send_request(self, request_id: Any, op: str, **args: Any) -> None:
        self.send(json.dumps({"id": request_id, "op": op, "args": args}).encode() + b"\n")

    def read_line(self) -> bytes:
        return self.reader.readline()

    def read(self) -> dict[str, Any]:
        """The next line, which must be one whole JSON object."""
        line = self.read_line()
        assert line.endswith(b"\n"), f"expected one whole line from the daemon, got {line[:200]!r}"
        message = json.loads(line)
        assert isinstance(message, dict), message
        return message

    def call(self, request_id: Any, op: str, **args: Any) -> dict[str, Any]:
        self.send_request(request_id, op, **args)
        return self.read()

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


def bind_stale_socket(path: Path) -> None:
    """Leave a socket file at ``path`` with nobody listening, as a killed daemon does."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.listen(1)
    sock.close()  # closing does not unlink: the file stays, and connecting to it is refused


def events_of(client: Client, **query: Any) -> list[dict[str, Any]]:
    return list(client.iter_events(**query))


def ids_in_order(events: Iterator[dict[str, Any]] | list[dict[str, Any]]) -> list[str]:
    return [event["id"] for event in events]
