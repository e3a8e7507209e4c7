"""Static checks as tests: ruff (lint and format) on the whole tree; mypy on the packages and the docs
generator in docs/gen/, strict on store/ and daemon/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

TREE = ["store", "daemon", "toka_cli", "tests", "benchmarks", "docs"]


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    "command", [["ruff", "check", *TREE], ["ruff", "format", "--check", *TREE]], ids=["lint", "format"]
)
def test_ruff_is_clean(command: list[str]) -> None:
    pytest.importorskip("ruff", reason="ruff comes with the test extra: pip install -e '.[test]'")
    result = run(*command)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow  # a minute and more of one core: it runs beside the rest (tests/run)
def test_mypy_is_clean() -> None:
    pytest.importorskip("mypy", reason="mypy comes with the test extra: pip install -e '.[test]'")
    result = run("mypy", "store", "daemon", "toka_cli", "docs/gen")
    assert result.returncode == 0, result.stdout + result.stderr
