"""Connecting to the daemon's socket: the one step every client shares, and the one that says
whether the daemon runs at all.

Standard library only (the hook and the light client import this on every call). Nothing
listening is :class:`DaemonNotRunning`, the case autostart fixes; any other failure is a
:class:`~store.errors.DaemonUnavailable` saying why.
"""

from __future__ import annotations

import os
import socket
import time

from daemon.paths import check_socket_length
from store.errors import DaemonUnavailable


class DaemonNotRunning(DaemonUnavailable):
    """Nothing listens on the socket: the case autostart fixes."""


# A full accept backlog answers connect() with EAGAIN: the daemon is there but busy (a burst of
# hooks, say). Retry that for this long before calling the daemon unavailable; the hook still
# falls back to its spool after it.
BACKLOG_RETRY_S = 2.0


def connect_socket(
    path: str | os.PathLike[str], timeout: float | None, backlog_retry: float = BACKLOG_RETRY_S
) -> socket.socket:
    """A connected socket to the daemon listening at ``path``, or DaemonUnavailable saying why not."""
    check_socket_length(path)
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
    return sock


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
