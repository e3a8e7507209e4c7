"""Helpers for the CLI tests: run toka in-process (Typer's runner) or as a real process.

Both ways see the TOKA_HOME that the autouse ``toka_home`` fixture (tests/conftest.py) sets, and
both autostart a daemon there on first use; that fixture kills it at teardown.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from toka_cli.main import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "session.jsonl"
EXAMPLE_SESSION = "fix-login-timeout"
# The `toka` console script of the interpreter running the tests (main.py has no __main__ guard).
TOKA = Path(sys.executable).parent / "toka"

HEX64 = re.compile(r"^[0-9a-f]{64}$")
TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")


def invoke(*args: str, input: str | bytes | None = None, env: Mapping[str, str | None] | None = None) -> Result:
    """Run toka in this process through Typer's runner; stdout and stderr are kept apart."""
    return CliRunner().invoke(app, list(args), input=input, env=env)


def invoke_json(*args: str, exit_code: int = 0, input: str | None = None) -> Any:
    """Run ``toka ARGS --json`` through Typer's runner, check its exit code, parse its stdout."""
    result = invoke(*args, "--json", input=input)
    assert result.exit_code == exit_code, (result.stdout, result.stderr)
    return json.loads(result.stdout)


def toka(
    *args: str,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 30,
) -> subprocess.CompletedProcess[str]:
    """Run the real `toka` command in a child process with this process's environment."""
    return subprocess.run(
        [str(TOKA), *args],
        input=input,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=timeout,
    )


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def home() -> Path:
    return Path(os.environ["TOKA_HOME"])


def normalise(value: Any) -> Any:
    """Replace what changes from run to run, so whole documents can be compared.

    Only values of the documented form are replaced (64 lowercase hex -> "<id>", ISO-8601 UTC
    with microseconds -> "<ts>", the test's TOKA_HOME -> "<home>"), so a malformed id or time is
    left as it is and shows up in the comparison.
    """
    if isinstance(value, dict):
        return {key: normalise(item) for key, item in value.items()}
    if isinstance(value, list):
        return [normalise(item) for item in value]
    if isinstance(value, str):
        if HEX64.match(value):
            return "<id>"
        if TS.match(value):
            return "<ts>"
        return value.replace(str(home()), "<home>")
    return value


def volatile(document: dict[str, Any], **kinds: type) -> dict[str, Any]:
    """Check that each named field has the given type, then replace it with "<name>"."""
    out = dict(document)
    for name, kind in kinds.items():
        assert isinstance(out[name], kind) and not isinstance(out[name], bool), (name, out[name])
        out[name] = f"<{name}>"
    return out


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` runs; a child of this process that exited is reaped, not counted."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # an orphan that PID 1 has not reaped yet has exited all the same
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[:1] != ["Z"]
    except OSError:
        return True


def kill_daemon_of(toka_home: Path) -> None:
    """SIGKILL the daemon whose pidfile is in ``toka_home``/run, if any, and wait until it is gone.

    A daemon autostarted by Typer's runner is a child of the test process, so it is reaped here
    too (tests/conftest.py only polls, and a zombie never stops answering kill(pid, 0)).
    """
    pidfile = toka_home / "run" / "toka.pid"
    try:
        pid = int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pid = 0
    deadline = time.monotonic() + 5
    while pid and pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    # A SIGKILLed daemon leaves its pidfile; without it tests/conftest.py has nothing left to
    # wait for (it polls kill(pid, 0), which a zombie answers until PID 1 reaps it).
    pidfile.unlink(missing_ok=True)


def import_example() -> None:
    result = invoke("import", str(EXAMPLE))
    assert result.exit_code == 0, result.output


def stderr_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def assert_error(text: str, *, contains: str = "", hint: bool = True) -> str:
    """stderr is one `error:` line (and a `hint:` line where there is one); returns the error."""
    lines = stderr_lines(text)
    assert lines and lines[0].startswith("error: "), text
    assert contains in lines[0], text
    if hint:
        assert len(lines) == 2 and lines[1].startswith("hint: "), text
    else:
        assert len(lines) <= 2, text
    assert "Traceback" not in text
    return lines[0]


def run_shell(command: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, env=dict(os.environ), timeout=timeout
    )


def seqs(events: Sequence[dict[str, Any]]) -> list[int]:
    return [event["seq"] for event in events]
