"""Fixtures for the daemon suite: real daemons in child processes, one TOKA_HOME per test.

``spawn`` starts as many daemons as a test needs (restarts included) and stops any still running
at the end. ``daemon`` replaces the top-level fixture of the same name for this folder: the same
real ``python -m daemon``, but with stderr in a file that ``Spawned.log()`` reads, because a pipe
that nobody drains blocks a daemon once it has logged 64 KiB.
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_support import Spawned, Spawner, spawn_daemon

from daemon.paths import Paths, resolve_paths


@pytest.fixture
def paths(toka_home: Path) -> Paths:
    return resolve_paths()


@pytest.fixture
def spawn(paths: Paths, tmp_path: Path) -> Iterator[Spawner]:
    started: list[Spawned] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Spawned:
        log_path = tmp_path / f"daemon-{len(started)}.log"
        running = spawn_daemon(paths, log_path, *args, env=env)
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
    return spawn()
