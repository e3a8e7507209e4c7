"""Real daemons in child processes, for any test that needs one (the ``spawn`` and ``daemon``
fixtures in conftest.py use these), and a fake peer: another program listening on toka's
socket, as an old daemon would be, that records what clients ask it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from warm_start import TEST_EMBEDDING_MODEL, WarmProcess, WarmStart

from daemon.client.autostart import answers
from daemon.client.sync import Client
from daemon.paths import Paths, resolve_paths

# How long a test waits for something that takes milliseconds when all is well.
PATIENCE = 15.0


@dataclass
class Spawned:
    """A daemon running in a child process; its stderr goes to ``log_path``."""

    paths: Paths
    process: subprocess.Popen[bytes] | WarmProcess
    log_path: Path

    def client(self, timeout: float = PATIENCE) -> Client:
        return Client(self.paths, autostart=False, timeout=timeout)

    def status(self) -> dict[str, Any]:
        with self.client() as client:
            result: dict[str, Any] = client.call("status")
            return result

    def stop(self, sig: int = signal.SIGTERM, timeout: float = PATIENCE) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(PATIENCE)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


# The ``spawn`` fixture: start a daemon (args and extra env as for spawn_daemon) on this test's home.
Spawner = Callable[..., Spawned]


def wait_for(condition: Callable[[], Any], what: str, timeout: float = PATIENCE) -> Any:
    """Poll ``condition`` until it returns something true, and return that; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting until {what}")
        time.sleep(0.01)
    return found


def daemon_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "daemon", *args]


def spawn_daemon(
    paths: Paths,
    log_path: Path,
    *args: str,
    env: dict[str, str] | None = None,
    preexec: Callable[[], None] | None = None,
) -> Spawned:
    """Start a daemon and wait until its socket answers ``hello``: forked from a process that has
    imported it already (tests/warm_start.py), or as ``python -m daemon`` when ``preexec`` is
    given (it runs in the child before the daemon does: to set a resource limit, say) or
    TOKATEST_COLD_DAEMONS=1 is set.

    stderr goes to a file, not a pipe: nobody drains a pipe during a test, and a daemon that
    logs more than the pipe holds (64 KiB of tracebacks, say) would block on its next log line.
    """
    environment = {**os.environ, **(env or {})}
    process: subprocess.Popen[bytes] | WarmProcess
    if preexec is None and os.environ.get("TOKATEST_COLD_DAEMONS") != "1":
        process = WarmStart.spawn(list(args), environment, log_path)
    else:
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                daemon_command(*args),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=environment,
                preexec_fn=preexec,
            )
    spawned = Spawned(paths, process, log_path)
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        if answers(paths):
            return spawned
        if process.poll() is not None:
            raise RuntimeError(f"daemon exited at start-up ({process.returncode}): {spawned.log()}")
        time.sleep(0.01)
    process.kill()
    process.wait()
    raise RuntimeError(f"daemon did not answer within {PATIENCE}s: {spawned.log()}")


@contextmanager
def shared_daemon(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str] | None = None) -> Iterator[Spawned]:
    """A real daemon in a TOKA_HOME of its own, not a test's (``env``: extra variables, as for
    ``spawn``); for a fixture of a wider scope than a test (``module_daemon`` in tests/conftest.py)."""
    home = Path(tempfile.mkdtemp(prefix="tkm", dir="/tmp"))
    with pytest.MonkeyPatch.context() as variables:
        for name in list(os.environ):
            if name.startswith("TOKA_"):
                variables.delenv(name)
        variables.setenv("TOKA_HOME", str(home))
        variables.setenv("TOKA_WATCH_AGENTS", "false")  # the machine's agents' folders stay out (conftest.py)
        variables.setenv("TOKA_END_AFTER_S", "0")  # months-old fixtures' agents stay as they were (conftest.py)
        variables.setenv("TOKA_RECALL_EMBEDDING_MODEL", TEST_EMBEDDING_MODEL)  # as conftest.py's, and why
        variables.setenv("TZ", "UTC")
        paths = resolve_paths()
        running = spawn_daemon(paths, tmp_path_factory.mktemp("shared-daemon") / "daemon.log", env=env)
    try:
        yield running
    finally:
        stop_spawned(running)
        shutil.rmtree(home, ignore_errors=True)


def stop_spawned(running: Spawned) -> None:
    if running.process.poll() is None:
        running.process.send_signal(signal.SIGTERM)
        try:
            running.process.wait(10)
        except subprocess.TimeoutExpired:
            running.process.kill()
            running.process.wait()


@dataclass
class FakePeer:
    """Another program on toka's socket that answers every request with ``result``.

    ``result`` None makes it answer with bytes that are not JSON at all.
    """

    paths: Paths
    result: dict[str, Any] | None
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.paths.ensure_runtime_dir()
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(self.paths.socket))
        self._listener.listen(16)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as reader:
            for line in reader:
                request = json.loads(line)
                self.requests.append(request)
                if self.result is None:
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
                    continue
                answer = {"id": request.get("id"), "ok": True, "result": self.result}
                conn.sendall(json.dumps(answer).encode() + b"\n")

    def close(self) -> None:
        self._listener.close()
        self.paths.socket.unlink(missing_ok=True)
