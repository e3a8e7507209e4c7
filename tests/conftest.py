"""Shared fixtures: every test gets its own TOKA_HOME; ``daemon`` runs a real one on a real socket."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemons import Spawned, Spawner, spawn_daemon

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


@pytest.fixture
def spawn(toka_home: Path, tmp_path: Path) -> Iterator[Spawner]:
    """Start as many daemons on this test's home as it needs; any still running are stopped."""
    started: list[Spawned] = []
    paths = resolve_paths()

    def start(*args: str, env: dict[str, str] | None = None) -> Spawned:
        running = spawn_daemon(paths, tmp_path / f"daemon-{len(started)}.log", *args, env=env)
        started.append(running)
        return running

    yield start
    for running in started:
        if running.process.poll() is None:
            running.process.send_signal(signal.SIGTERM)
            try:
                running.process.wait(10)
            except subprocess.TimeoutExpired:
                running.process.kill()
                running.process.wait()


@pytest.fixture
def daemon(spawn: Spawner) -> Spawned:
    """A real daemon on a real socket in this test's TOKA_HOME."""
    return spawn()
