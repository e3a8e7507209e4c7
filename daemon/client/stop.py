"""Stopping the daemon: ask it to shut down, then wait until its process is gone."""

from __future__ import annotations

import os
import time
from pathlib import Path

from daemon.client.sync import Client, probe
from daemon.paths import Paths
from store.errors import DaemonUnavailable

# How long `stop` waits for the daemon's process to be gone after it acknowledged.
STOP_WAIT_S = 15.0


def _pid_alive(pid: int) -> bool:
    """Whether the process runs. An exited one that nobody reaped yet (a zombie) does not: it
    answers kill(pid, 0) until its parent reaps it, which is this process for a daemon it
    autostarted, and PID 1 otherwise, which in many containers reaps late or never."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass  # not our child
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False  # no /proc (macOS): kill(pid, 0) has to do
    return stat.rsplit(")", 1)[-1].split()[:1] == ["Z"]


def stop_daemon(paths: Paths) -> int | None:
    """Ask the daemon to stop and wait until its process is gone; its pid, None when none ran."""
    if probe(paths).state == "unreachable":
        return None
    with Client(paths, autostart=False) as client:
        pid = int(client.call("shutdown")["pid"])
    deadline = time.monotonic() + STOP_WAIT_S
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    if _pid_alive(pid):
        raise DaemonUnavailable(f"the daemon (pid {pid}) did not stop within {STOP_WAIT_S:g}s", f"kill {pid}")
    return pid
