"""Helpers for the hook tests: the fixture payloads, the real `toka hook` process, a daemon to start late."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from transcripts import shared_or_skip
from typer.testing import CliRunner, Result

from daemon.client.autostart import answers
from daemon.paths import Paths
from toka_cli.main import app

# The `toka` console script of the interpreter running the tests.
TOKA = Path(sys.executable).parent / "toka"


def fixture_files() -> list[Path]:
    files = sorted(shared_or_skip("fixtures", "transcripts", "hooks").glob("*.json"))
    assert files
    return files


def payloads(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, list) and data
    return data


def run_hook(stdin: bytes | str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """The real `toka hook claude-code ARGS` with ``stdin``, in a child process."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run(
        [str(TOKA), "hook", "claude-code", *args],
        input=data,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=30,
    )


def start_daemon(paths: Paths, *args: str) -> subprocess.Popen[bytes]:
    """``python -m daemon ARGS`` in a child process, once it answers."""
    # The daemon's log goes to a file: a pipe nobody drains would block a chatty daemon.
    log = open(paths.data_dir / "test-daemon.log", "wb")  # noqa: SIM115 - the child holds it
    process = subprocess.Popen([sys.executable, "-m", "daemon", *args], stdout=subprocess.DEVNULL, stderr=log)
    log.close()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if answers(paths):
            return process
        if process.poll() is not None:
            raise RuntimeError("daemon exited at start-up: " + (paths.data_dir / "test-daemon.log").read_text())
        time.sleep(0.01)
    process.kill()
    raise RuntimeError("daemon did not answer within 15s")


def stop_daemon(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    process.wait(15)


def integrate_claude(*args: str) -> Result:
    """`toka integrate claude-code ARGS` through Typer's runner."""
    return CliRunner().invoke(app, ["integrate", "claude-code", *args])


def claude_settings(home: Path) -> dict[str, Any]:
    """The user's ~/.claude/settings.json under ``home``."""
    data: dict[str, Any] = json.loads((home / ".claude" / "settings.json").read_text())
    return data
