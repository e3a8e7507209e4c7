"""Helpers for the daemon suite: real daemons in child processes, raw connections, a fake peer
(tests/daemons.py).

Nothing here stands in for toka's own code. A daemon is ``python -m daemon`` in a child process
on a real socket; a raw connection is a plain AF_UNIX socket, for the bytes no client would send;
the fake peer is another program listening on toka's socket, as an old daemon would be; the
foreign listener is another user's program there, as an attacker's would be.
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
from daemon.version import PROTOCOL_VERSION, VERSION


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


# Another user on this machine: nobody, whom no toka daemon may answer.
OTHER_UID = 65534


def as_other_user(action: Any) -> dict[str, Any]:
    """Run ``action()`` in a forked child that has dropped to OTHER_UID; what it returned."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        outcome: dict[str, Any]
        try:
            os.close(read_end)
            os.setgid(OTHER_UID)
            os.setuid(OTHER_UID)
            outcome = action()
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, which asserts on it
            outcome = {"raised": type(exc).__name__, "message": str(exc)}
        os.write(write_end, json.dumps(outcome).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    result: dict[str, Any] = json.loads(data)
    return result


class ForeignListener:
    """A process of OTHER_UID listening where toka's socket is, answering every request as a
    toka daemon would, and keeping every byte it is sent (``received``).

    It binds in a directory of its own and its socket is then moved to ``path``: a process of
    another uid cannot create anything in toka's 0700 runtime dir, but a runtime dir it owns, or
    one every user can write, would let it. Needs root (to drop to OTHER_UID).
    """

    def __init__(self, path: Path, lair: Path) -> None:
        os.chown(lair, OTHER_UID, OTHER_UID)
        self._got = lair / "received"
        ready_read, ready_write = os.pipe()
        self._pid = os.fork()
        if self._pid == 0:  # the child: never returns into pytest
            try:
                os.close(ready_read)
                os.setgid(OTHER_UID)
                os.setuid(OTHER_UID)
                self._serve(lair / "s", ready_write)
            finally:
                os._exit(0)
        os.close(ready_write)
        with os.fdopen(ready_read, "rb") as ready:
            assert ready.read(1) == b"r", "the foreign listener did not start"
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.rename(lair / "s", path)

    def _serve(self, where: Path, ready: int) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(where))
        listener.listen(16)
        self._got.touch()
        os.write(ready, b"r")
        result = {"protocol": PROTOCOL_VERSION, "version": VERSION, "pid": os.getpid(), "events": []}
        while True:
            conn, _ = listener.accept()
            with conn, conn.makefile("rb") as reader:
                for line in reader:
                    with self._got.open("ab") as got:
                        got.write(line)
                    answer = {"id": json.loads(line).get("id"), "ok": True, "result": result}
                    conn.sendall(json.dumps(answer).encode() + b"\n")

    @property
    def received(self) -> bytes:
        return self._got.read_bytes()

    def close(self) -> None:
        os.kill(self._pid, 9)
        os.waitpid(self._pid, 0)
