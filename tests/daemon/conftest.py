"""Fixtures for the daemon suite: real daemons in child processes, one TOKA_HOME per test.

``spawn`` and ``daemon`` come from tests/conftest.py; daemon_support.py holds the helpers.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from postgres_daemons import private_server, team  # noqa: F401 - fixtures for the PostgreSQL daemon tests

from daemon.paths import Paths, resolve_paths


@pytest.fixture
def paths(toka_home: Path) -> Paths:
    return resolve_paths()


@pytest.fixture
def can_switch_user() -> None:
    if os.getuid() != 0:
        pytest.skip("switching to another uid needs root; the socket modes are checked elsewhere")
