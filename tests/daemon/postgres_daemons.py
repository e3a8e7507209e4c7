"""Several real daemons on one PostgreSQL log, for test_postgres_daemons.py and test_postgres_faults.py.

Each daemon is ``python -m daemon`` in a child process with a TOKA_HOME of its own (a short folder
under /tmp: socket paths are limited to 107 bytes) and ``TOKA_BACKEND=postgres``; the log is read
back straight from the database too, so that a count does not rest on the daemons' own answers.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import postgres_server
import psycopg
import pytest
from daemon_support import wait_for
from daemons import PATIENCE, Spawned, spawn_daemon
from transcripts import shared_or_skip

from daemon.client.sync import Client
from daemon.paths import Paths
from store.errors import TokaError

# The `toka` console script of the interpreter running the tests.
TOKA = Path(sys.executable).parent / "toka"


def home_paths(home: Path) -> Paths:
    """The paths a daemon with TOKA_HOME=``home`` uses (daemon/paths.py)."""
    return Paths(home, home, home / "run")


@dataclass
class PgDaemon:
    """A daemon on the PostgreSQL log at ``url``, in a home of its own."""

    name: str
    home: Path
    url: str
    log_path: Path
    spawned: Spawned | None = None

    @property
    def paths(self) -> Paths:
        return home_paths(self.home)

    @property
    def env(self) -> dict[str, str]:
        return {"TOKA_HOME": str(self.home), "TOKA_BACKEND": "postgres", "TOKA_STORE_URL": self.url}

    def start(self) -> PgDaemon:
        self.spawned = spawn_daemon(self.paths, self.log_path, env=self.env)
        return self

    @property
    def process(self) -> subprocess.Popen[bytes]:
        assert self.spawned is not None, f"daemon {self.name} was never started"
        return self.spawned.process

    def client(self, timeout: float = PATIENCE) -> Client:
        return Client(self.paths, autostart=False, timeout=timeout)

    def status(self) -> dict[str, Any]:
        with self.client() as client:
            result: dict[str, Any] = client.call("status")
            return result

    def connection(self) -> dict[str, Any]:
        """The ``connection`` part of status, or None when status itself fails."""
        connection: dict[str, Any] = self.status()["connection"]
        return connection

    def toka(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        """The real `toka ARGS` against this daemon (its TOKA_HOME)."""
        return subprocess.run(
            [str(TOKA), *args],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **self.env},
            timeout=timeout,
        )

    def hook(self, raw: bytes) -> subprocess.CompletedProcess[bytes]:
        """The real `toka hook claude-code` with ``raw`` on stdin, as Claude Code runs it."""
        return subprocess.run(
            [str(TOKA), "hook", "claude-code"],
            input=raw,
            capture_output=True,
            env={**os.environ, "TOKA_HOME": str(self.home)},
            timeout=30,
        )

    def kill(self) -> None:
        if self.spawned is not None:
            self.spawned.kill()

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it does not stop within PATIENCE."""
        if self.spawned is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(PATIENCE)
        except subprocess.TimeoutExpired:
            self.spawned.kill()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


class Team(Protocol):
    """The ``team`` fixture: a new daemon, not yet started, on the log at ``url``."""

    def __call__(self, url: str, name: str = ...) -> PgDaemon: ...


@pytest.fixture
def team(tmp_path: Path) -> Iterator[Team]:
    """Daemons with homes of their own on a PostgreSQL log; all stopped and their homes removed after."""
    made: list[PgDaemon] = []

    def new(url: str, name: str = "") -> PgDaemon:
        name = name or f"d{len(made)}"
        home = Path(tempfile.mkdtemp(prefix="tk", dir="/tmp"))
        daemon = PgDaemon(name, home, url, tmp_path / f"{name}.log")
        made.append(daemon)
        return daemon

    yield new
    for daemon in made:
        daemon.stop()
    for daemon in made:
        shutil.rmtree(daemon.home, ignore_errors=True)


@pytest.fixture
def private_server() -> Iterator[postgres_server.Server]:
    """A PostgreSQL server of this test's own, to restart or stop without disturbing other tests."""
    try:
        server = postgres_server.start()
    except postgres_server.Unavailable as error:
        if os.environ.get("TOKATEST_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"no PostgreSQL server: {error} (and TOKATEST_REQUIRE_POSTGRES=1)", pytrace=False)
        pytest.skip(f"no PostgreSQL server: {error}")
    try:
        yield server
    finally:
        postgres_server.stop(server)


# Reading the log straight from the database.


@dataclass
class Row:
    seq: int
    id: str
    session: str
    parents: list[str]
    key: str | None


def log_rows(url: str) -> list[Row]:
    """Every event row in seq order, read with a connection of the test's own."""
    with psycopg.connect(url, connect_timeout=10) as conn:
        rows = conn.execute("SELECT seq, id, session, parents, key FROM events ORDER BY seq").fetchall()
    return [
        Row(seq, id_, session, parents.split(",") if parents else [], key) for seq, id_, session, parents, key in rows
    ]


def chain_problems(rows: list[Row]) -> list[str]:
    """What breaks "seqs dense from 1, one linear chain per session": each event's parents is
    exactly the previous event of its session (none for the first)."""
    problems = []
    if [row.seq for row in rows] != list(range(1, len(rows) + 1)):
        problems.append(f"seqs are not 1..{len(rows)}")
    last: dict[str, str] = {}
    for row in rows:
        wanted = [last[row.session]] if row.session in last else []
        if row.parents != wanted:
            problems.append(f"seq {row.seq} of {row.session} has parents {row.parents}, not {wanted}")
        last[row.session] = row.id
    return problems


def doubled(keys: list[str | None]) -> dict[str | None, int]:
    return {key: count for key, count in Counter(keys).items() if count > 1}


# Clients in threads of their own.


class Writers:
    """Client threads that append keyed events (``batch`` at a time) until stopped: ``sent`` holds
    the keys asked for, ``acked`` those the daemon answered for, ``failed`` the errors it gave."""

    def __init__(self, daemons: list[PgDaemon], per_daemon: int, session: str = "s", batch: int = 1) -> None:
        self.acked: list[str] = []
        self.failed: list[str] = []
        self.sent: list[str] = []
        self._batch = batch
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._write, args=(daemon, f"{daemon.name}{n}", session), daemon=True)
            for daemon in daemons
            for n in range(per_daemon)
        ]
        for thread in self._threads:
            thread.start()

    def _write(self, daemon: PgDaemon, name: str, session: str) -> None:
        n = 0
        client = None
        while not self._stop.is_set():
            keys = [f"{name}-{n + i}" for i in range(1 + n % self._batch)]
            n += len(keys)
            try:
                client = client or daemon.client(timeout=30)
                self.sent.extend(keys)
                client.append([{"kind": "tool.call", "payload": {"key": k}, "key": k} for k in keys], session=session)
                self.acked.extend(keys)
            except TokaError as exc:
                self.failed.append(f"{keys[0]}: {type(exc).__name__}: {exc.message}")
                if client is not None:
                    client.close()
                client = None
                self._stop.wait(0.05)  # a daemon that is gone: do not spin
        if client is not None:
            client.close()

    def wait_for(self, count: int, timeout: float = PATIENCE) -> None:
        """Until ``count`` more keys than now are acknowledged."""
        wanted = len(self.acked) + count
        wait_for(
            lambda: len(self.acked) >= wanted, f"{count} more appends are acknowledged ({self.failed[-1:]})", timeout
        )

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(60)
            assert not thread.is_alive()


def assert_once(url: str, acked: list[str]) -> int:
    """Every acknowledged key is in the log exactly once, no key twice, one chain: the row count."""
    rows = log_rows(url)
    keys = [row.key for row in rows]
    assert not doubled(keys)
    assert set(acked) <= set(keys), sorted(set(acked) - set(keys))[:5]
    assert chain_problems(rows) == []
    return len(rows)


@dataclass
class Subscriber:
    """``Client.subscribe(after_seq=0)`` on one daemon, collecting what it receives."""

    daemon: PgDaemon
    events: list[dict[str, Any]] = field(default_factory=list)
    error: list[BaseException] = field(default_factory=list)

    def __post_init__(self) -> None:
        # From seq 0: whenever the subscription starts, the backlog covers what came before it.
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        try:
            with self.daemon.client() as client:
                for event in client.subscribe(after_seq=0):
                    self.events.append(event)
        except (TokaError, OSError) as exc:  # the daemon went away at the end of the test
            self.error.append(exc)

    def seqs(self) -> list[int]:
        return [event["seq"] for event in list(self.events)]

    def wait_for_seq(self, seq: int, timeout: float = PATIENCE) -> None:
        """Until the last event received is ``seq``."""
        got = self.events
        wait_for(lambda: bool(got) and got[-1]["seq"] >= seq, f"{self.daemon.name} gets seq {seq}", timeout)


def hook_payloads() -> list[bytes]:
    """The distinct Claude Code hook payloads of ../shared/fixtures/transcripts/hooks, as the bytes a hook reads."""
    raws: dict[bytes, None] = {}  # each once, so that what a test fires names its events
    for path in sorted(shared_or_skip("fixtures", "transcripts", "hooks").glob("*.json")):
        for payload in json.loads(path.read_text(encoding="utf-8")):
            raws[json.dumps(payload).encode()] = None
    assert raws
    return list(raws)
