"""Shared fixtures: every test gets its own TOKA_HOME; ``daemon`` runs a real one on a real socket."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from daemon.autostart import answers
from daemon.client import Client
from daemon.paths import Paths, resolve_paths

ROOT = Path(__file__).resolve().parent.parent


def stop_daemon_in(paths: Paths) -> None:
    """Kill whatever daemon still runs in a test's home (autostarted ones included)."""
    try:
        pid = int(paths.pidfile.read_text().strip())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    for _ in range(200):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)


@pytest.fixture(autouse=True)
def toka_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh, short TOKA_HOME (socket paths are limited to 107 bytes) for every test."""
    home = Path(tempfile.mkdtemp(prefix="tk", dir="/tmp"))
    monkeypatch.setenv("TOKA_HOME", str(home))
    for name in list(os.environ):
        if name.startswith("TOKA_") and name not in ("TOKA_HOME",):
            monkeypatch.delenv(name)
    yield home
    stop_daemon_in(resolve_paths())
    shutil.rmtree(home, ignore_errors=True)


@dataclass
class RunningDaemon:
    paths: Paths
    process: subprocess.Popen[bytes]

    def client(self) -> Client:
        return Client(self.paths, autostart=False)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout)

    def log(self) -> str:
        return self.process.stderr.read().decode() if self.process.stderr else ""


def start_daemon_process(paths: Paths, *args: str) -> RunningDaemon:
    """Run ``python -m daemon`` in the foreground of a child process and wait until it answers."""
    process = subprocess.Popen(
        [sys.executable, "-m", "daemon", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if answers(paths):
            return RunningDaemon(paths, process)
        if process.poll() is not None:
            raise RuntimeError("daemon exited at start-up: " + process.stderr.read().decode())  # type: ignore[union-attr]
        time.sleep(0.01)
    process.kill()
    raise RuntimeError("daemon did not answer within 15s")


@pytest.fixture
def daemon(toka_home: Path) -> Iterator[RunningDaemon]:
    running = start_daemon_process(resolve_paths())
    yield running
    if running.process.poll() is None:
        running.process.send_signal(signal.SIGTERM)
        try:
            running.process.wait(15)
        except subprocess.TimeoutExpired:
            running.process.kill()
            running.process.wait()
