"""Daemons started warm: a process per test worker that has imported the daemon once and forks
a daemon for each test that asks for one.

``python -m daemon`` spends about 0.35 s of CPU importing the daemon before it does anything, and
the suite starts some 400 daemons of its own, so a third of its CPU went to those imports. The
forked child runs what ``python -m daemon`` runs (``daemon.server.main.main``) with the test's
environment, working directory, arguments and log file; it is the real daemon on its real
socket, it only skips the imports. What the imports themselves do, and the module entry point,
are still tested by every daemon the CLI autostarts, which is a ``python -m daemon`` process.

The parent of a forked daemon is the warm process, not the test, so only it can collect an exit
status: :class:`WarmProcess` asks it, over the pipe, for what ``poll`` and ``wait`` answer, and
otherwise behaves as the ``subprocess.Popen`` it stands in for (``pid``, ``returncode``,
``send_signal``, ``terminate``, ``kill``).

The warm process (:func:`serve`) reads one JSON request per line on stdin and answers one line on
stdout: ``{"spawn": {"args", "env", "cwd", "log"}}`` -> ``{"pid"}``; ``{"wait": pid, "timeout":
seconds or null}`` -> ``{"code": exit code or null}`` (a timeout of 0 is ``poll``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO

# The embedding model of the tests' daemons (the ``toka_home`` fixture of tests/conftest.py sets
# it): WordLlama alone, which embeds thousands of texts a second where the default pair with
# all-MiniLM-L6-v2 embeds tens, and a test that imports a transcript would spend seconds of CPU
# embedding it. The tests of the default model (tests/search/test_recall_models.py) unset it.
TEST_EMBEDDING_MODEL = "wordllama/l2_supercat-256"

# What a daemon imports as it starts, beyond daemon.server.main: the SQLite backend and its driver,
# the watchers' watchfiles (and anyio under it), the heads' signing keys, the platform's dirs, and
# the embedding model's package, which the embedder imports on its thread at start (0.4 s).
PRELOAD = (
    "daemon.server.main",
    "store.sqlite.store",
    "aiosqlite",
    "sqlite3",
    "watchfiles",
    "anyio._backends._asyncio",
    "cryptography.hazmat.primitives.asymmetric.ed25519",
    "cryptography.hazmat.primitives.serialization",
    "platformdirs",
    "wordllama",
)


class WarmStart:
    """The warm process of this test worker, started at its first use."""

    _lock = threading.Lock()
    _process: subprocess.Popen[bytes] | None = None

    @classmethod
    def spawn(
        cls, args: list[str], env: dict[str, str], log_path: Path, *, cwd: str | None = None, session: bool = False
    ) -> WarmProcess:
        """Fork a daemon with ``args``, ``env`` and its output appended to ``log_path``, in ``cwd``
        (this process's by default) and, with ``session``, in a session of its own."""
        spec = {"args": args, "env": env, "cwd": cwd or os.getcwd(), "log": str(log_path), "session": session}
        return WarmProcess(cls.ask({"spawn": spec})["pid"], args)

    @classmethod
    def ask(cls, request: dict[str, Any]) -> dict[str, Any]:
        with cls._lock:
            process = cls._process
            if process is None or process.poll() is not None:
                process = cls._process = cls._start()
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(json.dumps(request).encode() + b"\n")
            process.stdin.flush()
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"the warm start process exited ({process.poll()}) at {request}")
            answer: dict[str, Any] = json.loads(line)
            return answer

    @staticmethod
    def _start() -> subprocess.Popen[bytes]:
        # Nothing of a test's own environment (TOKA_HOME, say): each daemon gets its test's.
        env = {name: value for name, value in os.environ.items() if not name.startswith("TOKA_")}
        tests = str(Path(__file__).parent)
        code = f"import sys; sys.path.append({tests!r}); import warm_start; warm_start.serve()"
        return subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd="/"
        )


class WarmProcess:
    """A forked daemon, as much of ``subprocess.Popen`` as the tests use."""

    def __init__(self, pid: int, args: list[str]) -> None:
        self.pid = pid
        self.args = args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self._wait(0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._wait(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return code

    def _wait(self, timeout: float | None) -> int | None:
        if self.returncode is None:
            self.returncode = WarmStart.ask({"wait": self.pid, "timeout": timeout})["code"]
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def launch_autostarted(env: dict[str, str], log: BinaryIO) -> WarmProcess:
    """What ``daemon.client.autostart.launch_daemon`` does (``python -m daemon`` in a session of
    its own, in ``/``, logging to ``log``), forked warm: the ``warm_autostart`` fixture of
    tests/conftest.py puts it in that function's place for the clients a test runs in its own
    process (Typer's runner, ``Client()``). Subprocesses (``toka ...``) still start theirs cold."""
    log_path = Path(os.readlink(f"/proc/self/fd/{log.fileno()}"))  # opened from a descriptor: no name
    return WarmStart.spawn([], env, log_path, cwd="/", session=True)


# The warm process's side.


def serve() -> None:
    from daemon.recall.model import embedder_environment

    embedder_environment()
    for name in PRELOAD:
        __import__(name)
    # The tests' model as well, which every daemon's embedder loads at start (0.2 s of CPU): the
    # forked daemons find it loaded (daemon/recall/model.py keeps it per process, by the arguments
    # it was called with, so it is called here as the embedder calls it).
    from daemon.recall.model import load_embedder
    from daemon.recall.settings import RecallSettings

    load_embedder(TEST_EMBEDDING_MODEL, RecallSettings().embedding_model_dir)
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    exited: dict[int, int] = {}
    # Daemons killed by a test are reaped at once, not left as zombies that still answer
    # kill(pid, 0) to a test waiting for them to be gone; their codes wait in ``exited``.
    signal.signal(signal.SIGCHLD, lambda *_: _reap(exited))
    for line in requests:
        request = json.loads(line)
        if "spawn" in request:
            answer: dict[str, Any] = {"pid": _fork(request["spawn"])}
        else:
            answer = {"code": _wait(exited, request["wait"], request["timeout"])}
        answers.write(json.dumps(answer).encode() + b"\n")
        answers.flush()


def _wait(exited: dict[int, int], pid: int, timeout: float | None) -> int | None:
    """``pid``'s exit code once it has exited (negative: the signal that ended it), waiting up to
    ``timeout`` seconds (None: as long as it runs); None while it still runs."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        _reap(exited)
        if pid in exited or deadline is not None and time.monotonic() >= deadline:
            return exited.get(pid)
        time.sleep(0.005)


def _reap(exited: dict[int, int]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        exited[pid] = os.waitstatus_to_exitcode(status)


def _fork(spec: dict[str, Any]) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        if spec["session"]:
            os.setsid()
        os.environ.clear()
        os.environ.update(spec["env"])
        from daemon.recall.model import embedder_environment

        embedder_environment()  # the model is loaded already, so its loader will not set these
        time.tzset()
        os.chdir(spec["cwd"])
        null = os.open(os.devnull, os.O_RDONLY)
        log = os.open(spec["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.closerange(3, min(os.sysconf("SC_OPEN_MAX"), 65536))
        from daemon.server import main

        sys.argv = [str(Path(main.__file__).parents[1] / "__main__.py"), *spec["args"]]
        main.main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            sys.stderr.write(exc.code + "\n")
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)
