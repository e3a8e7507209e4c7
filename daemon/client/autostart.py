"""Starting the daemon on first use, as atuin does it.

A start-up lock keeps two clients from starting two daemons; success means the socket answers
``hello`` (not merely that a pid exists); a stale socket is removed by the daemon itself, which
holds the pidfile lock before it binds. When the daemon cannot start, the error quotes the last
line it logged; when its settings are wrong, the error is the daemon's own ConfigError, as if the
client had read them: the client reads only the daemon's own sections (``[store]``, ``[daemon]``),
the daemon all of them, with the components that declare them.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import BinaryIO, Protocol

from daemon.client.socket import connect_socket
from daemon.ownership import open_private, private_dir, read_private
from daemon.paths import Paths
from daemon.protocol import decode, request, result_of
from store.errors import ConfigError, DaemonUnavailable, TokaError, UnsafePath


def answers(paths: Paths) -> bool:
    """Whether a daemon answers ``hello`` on the socket of ``paths``."""
    try:
        sock = connect_socket(paths.socket, timeout=2.0)
    except DaemonUnavailable:
        return False
    try:
        with sock, sock.makefile("rb") as reader:
            sock.sendall(request(0, "hello", {}))
            result_of(decode(reader.readline() or b"null"))
        return True
    except (OSError, TokaError):
        return False


def _start_failure(paths: Paths, log_offset: int) -> TokaError:
    """Why the daemon exited: the error it left (daemon/server/main.py), else, for a crash
    rather than a refusal, the last line of what this start wrote to the log that names an error.
    Settings it refused (a ConfigError as it resolved them) are that ConfigError itself: one line
    naming the key, exit code 2, as when the client read every section itself."""
    log_hint = f"see {paths.log_file}"
    try:
        left = json.loads(read_private(paths.start_failure))
        paths.start_failure.unlink()
    except (OSError, ValueError, UnsafePath):
        left = None
    if isinstance(left, dict) and left.get("settings") is True and isinstance(left.get("message"), str):
        return ConfigError(left["message"], left.get("hint") if isinstance(left.get("hint"), str) else None)
    if isinstance(left, dict) and isinstance(left.get("message"), str):
        hint = left.get("hint")
        return DaemonUnavailable(
            f"the daemon exited at start-up: {left['message']}",
            f"{hint} ({log_hint})" if isinstance(hint, str) and hint else log_hint,
        )
    try:
        with open(open_private(paths.log_file, os.O_RDONLY), "rb") as handle:
            handle.seek(log_offset)
            lines = handle.read().decode(errors="replace").splitlines()
    except (OSError, UnsafePath):
        lines = []
    reason = next((line for line in reversed(lines) if "error" in line.lower()), "no log written")
    return DaemonUnavailable(f"the daemon exited at start-up: {reason.strip()}", log_hint)


class Launched(Protocol):
    """The started daemon's process, as far as :func:`start_daemon` watches it."""

    def poll(self) -> int | None: ...


def launch_daemon(env: dict[str, str], log: BinaryIO) -> Launched:
    """Start ``python -m daemon`` in a session of its own, with ``env``, logging to ``log``."""
    # -P keeps the caller's working directory off sys.path: a project folder that happens
    # to hold its own `daemon` package must not be what starts. cwd / holds no mount busy.
    return subprocess.Popen(
        [sys.executable, "-P", "-m", "daemon"],
        cwd="/",
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
        close_fds=True,
    )


def start_daemon(paths: Paths, timeout: float | None = None) -> None:
    """Start a daemon in the background and wait until it answers (no-op if one does)."""
    paths.check_socket_length()
    try:
        paths.ensure_runtime_dir()
        paths.ensure_data_dir()
        private_dir(paths.log_file.parent)
        lock = open(open_private(paths.start_lock, os.O_WRONLY | os.O_CREAT), "wb")  # noqa: SIM115 - closed below
        log = open(open_private(paths.log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "ab")  # noqa: SIM115
    except OSError as exc:
        raise DaemonUnavailable(
            f"cannot prepare the daemon's directories: {exc}",
            "check that the data dir is writable, or set TOKA_HOME",
        ) from None
    if timeout is None:
        from daemon.config import OWN_SECTIONS, DaemonSettings
        from daemon.config_file import load_settings

        # The daemon's own sections only: the daemon checks the others as it starts (below).
        timeout = load_settings(OWN_SECTIONS, paths.config_file).settings[DaemonSettings].start_timeout
    with lock, log:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a concurrent starter finishes first
        if answers(paths):
            return
        log_offset = log.seek(0, os.SEEK_END)
        with contextlib.suppress(FileNotFoundError):
            paths.start_failure.unlink()  # an older start's
        env = dict(os.environ)
        if "TOKA_HOME" in env:
            env["TOKA_HOME"] = str(Path(env["TOKA_HOME"]).expanduser().absolute())
        process = launch_daemon(env, log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if answers(paths):
                return
            # The reason it left is enough: the process may take a moment more to end.
            if process.poll() is not None or paths.start_failure.exists():
                raise _start_failure(paths, log_offset)
            time.sleep(0.01)
        raise DaemonUnavailable(f"the daemon did not answer within {timeout:g}s", f"see {paths.log_file}")
