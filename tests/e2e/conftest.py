"""Fixtures of the end-to-end tests: the agent CLIs (installed once, skipped without node), the
fake model, and a home of the test's own for the agent to write into."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_clis import AgentCli, installed
from daemons import wait_for
from fake_model import FakeModel


@pytest.fixture(scope="session")
def claude() -> AgentCli:
    return installed("claude")


@pytest.fixture(scope="session")
def codex() -> AgentCli:
    return installed("codex")


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel() as server:
        yield server


@pytest.fixture
def agent_home() -> Iterator[Path]:
    """The agent's HOME, holding the project it works in (``project/``, with a notes.txt).

    A toka the agent starts without this test's TOKA_HOME (Codex gives its MCP servers only a
    few variables) uses the default folders under this HOME, and autostarts a daemon there: the
    HOME is short, as TOKA_HOME is, for the socket path's sake, and that daemon is stopped at the
    end."""
    home = Path(tempfile.mkdtemp(prefix="ag", dir="/tmp"))
    project = home / "project"
    project.mkdir()
    (project / "notes.txt").write_text("the build runs on port 8421\n")
    yield home
    for pidfile in home.rglob("toka.pid"):
        try:
            pid = int(pidfile.read_text().strip())
            os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError):
            continue
        wait_for(lambda pid=pid: not _running(pid), f"daemon {pid} under the agent's HOME is gone")
    shutil.rmtree(home, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie PID 1 has not reaped yet is gone all the same
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[:1] != ["Z"]
    except OSError:
        return True
