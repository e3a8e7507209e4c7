"""The client's socket: connecting to the daemon, and one connection's requests and answers.

The sync client (daemon/client/sync.py) and the hook (toka_cli/hook.py) both talk through
:class:`Connection`. The hook imports this on every tool call, so it loads the standard
library's socket and json and nothing heavier.
"""

from __future__ import annotations

import os
import socket
import time

from daemon.ownership import peer_uid, private_dir
from daemon.paths import check_socket_length
from daemon.protocol import decode, request, request_of_encoded, result_of
from store.errors import DaemonUnavailable, UnsafePath

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (about 4 ms): hooks import this module
if TYPE_CHECKING:
    from typing import Any


class DaemonNotRunning(DaemonUnavailable):
    """Nothing listens on the socket: the case autostart fixes."""


# A full accept backlog answers connect() with EAGAIN: the daemon is there but busy (a burst of
# hooks, say). Retry that for this long before calling the daemon unavailable; the hook still
# falls back to its spool after it.
BACKLOG_RETRY_S = 2.0


def connect_socket(
    path: str | os.PathLike[str], timeout: float | None, backlog_retry: float = BACKLOG_RETRY_S
) -> socket.socket:
    """A connected socket to the daemon listening at ``path``, or DaemonUnavailable saying why not.

    Its directory must be the user's own (UnsafePath otherwise), and so must the process that
    listens: one of another uid is refused before a byte is sent to it."""
    check_socket_length(path)
    if not private_dir(os.path.dirname(path), create=False):
        raise DaemonNotRunning("the toka daemon is not running", "start it with `toka daemon start`")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        _connect_through_backlog(sock, os.fspath(path), backlog_retry)
    except (FileNotFoundError, NotADirectoryError, ConnectionRefusedError):
        sock.close()
        raise DaemonNotRunning("the toka daemon is not running", "start it with `toka daemon start`") from None
    except PermissionError:
        sock.close()
        raise DaemonUnavailable(f"permission denied on {path}", "the daemon belongs to another user") from None
    except BlockingIOError:
        sock.close()
        raise DaemonUnavailable(
            f"the daemon at {path} is not accepting connections: its queue stayed full for {backlog_retry:g} s",
            "it is overloaded or hung; see `toka daemon logs`",
        ) from None
    except OSError as exc:
        sock.close()
        raise DaemonUnavailable(f"cannot reach the daemon at {path}: {exc.strerror}") from None
    try:
        check_peer(sock, path)
    except UnsafePath:
        sock.close()
        raise
    return sock


def check_peer(sock: socket.socket, path: str | os.PathLike[str]) -> None:
    """UnsafePath unless the process behind ``sock`` runs as this user."""
    uid = peer_uid(sock)
    if uid is not None and uid != os.getuid():
        raise UnsafePath(
            f"the process listening on {path} runs as uid {uid}, not as you (uid {os.getuid()}): nothing was sent",
            "it is not your toka daemon; set TOKA_HOME to a directory of your own (e.g. TOKA_HOME=~/.toka)",
        )


def _connect_through_backlog(sock: socket.socket, path: str, backlog_retry: float) -> None:
    """``sock.connect(path)``, retried with a growing pause while the listener's backlog is full."""
    deadline = time.monotonic() + backlog_retry
    pause = 0.001
    while True:
        try:
            sock.connect(path)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(pause)  # the accept queue drains at the daemon's pace; nothing to wait on here
            pause = min(pause * 2, 0.05)


class Connection:
    """One socket to the daemon. Answers come in request order: a caller may send a request
    and read its answer later (:meth:`send`, :meth:`receive`), or do both (:meth:`call`)."""

    def __init__(
        self, path: str | os.PathLike[str], timeout: float | None, backlog_retry: float = BACKLOG_RETRY_S
    ) -> None:
        self.sock = connect_socket(path, timeout, backlog_retry)
        self._reader = self.sock.makefile("rb")
        self._next_id = 0

    def send(self, op: str, args: dict[str, Any]) -> int:
        """Send one request; its id."""
        self._next_id += 1
        return self._send_line(request(self._next_id, op, args))

    def send_encoded(self, op: str, name: str, items: list[bytes]) -> int:
        """Send one request whose one argument ``name`` is the list of ``items``, each a JSON
        value encoded already; its id."""
        self._next_id += 1
        return self._send_line(request_of_encoded(self._next_id, op, name, items))

    def _send_line(self, line: bytes) -> int:
        try:
            self.sock.sendall(line)
        except OSError as exc:
            raise DaemonUnavailable(f"lost the connection to the daemon: {exc}", "retry") from None
        return self._next_id

    def receive(self) -> dict[str, Any]:
        """The next message from the daemon."""
        try:
            line = self._reader.readline()
        except TimeoutError:
            raise DaemonUnavailable("the daemon did not answer in time", "see `toka daemon logs`") from None
        except OSError as exc:
            raise DaemonUnavailable(f"lost the connection to the daemon: {exc}", "retry") from None
        if not line:
            raise DaemonUnavailable("the daemon closed the connection", "see `toka daemon logs`")
        return decode(line)

    def call(self, op: str, **args: Any) -> Any:
        """Send one request and return its result (raising the daemon's error)."""
        return result_of(self._answer(self.send(op, args)))

    def _answer(self, request_id: int) -> dict[str, Any]:
        while True:
            message = self.receive()
            if message.get("id") == request_id or message.get("id") is None:
                return message

    def close(self) -> None:
        self._reader.close()
        self.sock.close()
