"""Fixtures for the CLI tests (helpers live in cli_support.py)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import import_example, kill_daemon_of


@pytest.fixture(autouse=True)
def reap_daemon(toka_home: Path) -> Iterator[None]:
    """Kill and reap the daemon of the test's TOKA_HOME before ``toka_home`` cleans up."""
    yield
    kill_daemon_of(toka_home)


@pytest.fixture
def example(toka_home: Path) -> str:
    """The example session imported into this test's TOKA_HOME; its name."""
    import_example()
    return "fix-login-timeout"


@pytest.fixture
def other_home() -> Iterator[Path]:
    """A second short TOKA_HOME; whatever daemon a test starts in it is killed at the end."""
    path = Path(tempfile.mkdtemp(prefix="tk2", dir="/tmp"))
    yield path
    kill_daemon_of(path)
    shutil.rmtree(path, ignore_errors=True)
