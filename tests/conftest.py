"""Shared fixtures: every test gets its own TOKA_HOME; ``daemon`` runs a real one on a real socket;
``postgres_database`` is a new database on the run's PostgreSQL server (tests/postgres_server.py)."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import postgres_server
import pytest
from agent_homes import AgentsHome, make_agents_home
from daemons import Spawned, Spawner, shared_daemon, spawn_daemon, stop_spawned
from warm_start import TEST_EMBEDDING_MODEL, launch_autostarted

from daemon.client import autostart
from daemon.paths import Paths, resolve_paths

ROOT = Path(__file__).resolve().parent.parent

# The run's PostgreSQL server, in the process that started it.
_postgres: postgres_server.Server | None = None


def pytest_configure(config: pytest.Config) -> None:
    """Start the run's PostgreSQL server here, in the process that hands out the tests (or runs them
    all): xdist starts its workers after this, and they find the URL in the environment."""
    global _postgres
    if "PYTEST_XDIST_WORKER" in os.environ or config.option.help or config.option.collectonly:
        return
    _postgres = postgres_server.start_for_run()


def pytest_unconfigure(config: pytest.Config) -> None:
    global _postgres
    if _postgres is not None:
        postgres_server.stop_for_run(_postgres)
        _postgres = None


def stop_daemon_in(paths: Paths) -> None:
    """Kill whatever daemon still runs in a test's home (autostarted ones included)."""
    try:
        pid = int(paths.pidfile.read_text().strip())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    for _ in range(200):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)


@pytest.fixture(autouse=True)
def toka_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh, short TOKA_HOME (socket paths are limited to 107 bytes) for every test."""
    home = Path(tempfile.mkdtemp(prefix="tk", dir="/tmp"))
    monkeypatch.setenv("TOKA_HOME", str(home))
    # Tables and replays show local times: the tests read them in UTC wherever they run.
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    for name in list(os.environ):
        if name.startswith("TOKA_") and name not in ("TOKA_HOME",):
            monkeypatch.delenv(name)
    # The daemons of tests follow no agent's folders: the machine's own ~/.claude and ~/.codex
    # stay out of them. The tests of that following turn it on, with a HOME of their own.
    monkeypatch.setenv("TOKA_WATCH_AGENTS", "false")
    # The shared transcripts are months old: with `lifecycle.end_after_s` at its default their
    # agents would be ENDED as they are imported. The tests of that set it themselves.
    monkeypatch.setenv("TOKA_END_AFTER_S", "0")
    # WordLlama alone, not the default pair: seconds of CPU less per transcript (tests/warm_start.py).
    monkeypatch.setenv("TOKA_RECALL_EMBEDDING_MODEL", TEST_EMBEDDING_MODEL)
    yield home
    stop_daemon_in(resolve_paths())
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(autouse=True)
def warm_autostart(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Daemons that clients in the test's own process autostart are forked warm
    (tests/warm_start.py), as the fixtures' daemons are: the same ``main()`` on the same socket,
    without the 0.4 s of imports that were most of the CLI tests' time. Tests of the start-up
    itself are marked ``cold_autostart`` and start ``python -m daemon``, as do all with
    TOKATEST_COLD_DAEMONS=1 and every ``toka`` run as a subprocess."""
    if request.node.get_closest_marker("cold_autostart") or os.environ.get("TOKATEST_COLD_DAEMONS") == "1":
        return
    monkeypatch.setattr(autostart, "launch_daemon", launch_autostarted)


@pytest.fixture
def agents_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[AgentsHome]:
    """A HOME of the test's own with the agents' folders, empty (tests/agent_homes.py fills them),
    and the daemons of the test following them (watch.agents on); the agents' own variables
    unset, so that their defaults under this HOME apply. A short path: `toka status` shows it."""
    agents = make_agents_home(Path(tempfile.mkdtemp(prefix="tkh", dir="/tmp")))
    monkeypatch.setenv("HOME", str(agents.home))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TOKA_WATCH_AGENTS", "true")
    yield agents
    shutil.rmtree(agents.home, ignore_errors=True)


@pytest.fixture
def spawn(toka_home: Path, tmp_path: Path) -> Iterator[Spawner]:
    """Start as many daemons on this test's home as it needs; any still running are stopped."""
    started: list[Spawned] = []
    paths = resolve_paths()

    def start(*args: str, env: dict[str, str] | None = None) -> Spawned:
        running = spawn_daemon(paths, tmp_path / f"daemon-{len(started)}.log", *args, env=env)
        started.append(running)
        return running

    yield start
    for running in started:
        stop_spawned(running)


@pytest.fixture
def daemon(spawn: Spawner) -> Spawned:
    """A real daemon on a real socket in this test's TOKA_HOME."""
    return spawn()


@pytest.fixture(scope="module")
def module_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Spawned]:
    """One real daemon for the tests of a module (in each xdist worker that runs some of them), in a
    TOKA_HOME of its own, not the test's: for long tables of cases that only talk to it through its
    socket (``.client()``, ``.paths``), each writing under a session name of its own and checking
    counts against what was there before it. A start per case was most of such a table's time."""
    with shared_daemon(tmp_path_factory) as running:
        yield running


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The admin URL (user and database postgres) of the run's PostgreSQL server; a skip without one,
    or a failure when TOKATEST_REQUIRE_POSTGRES=1 (CI)."""
    url = os.environ.get(postgres_server.URL_VARIABLE)
    if url:
        return url
    reason = f"no PostgreSQL server: {postgres_server.unavailable_reason()}"
    if os.environ.get("TOKATEST_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"{reason} (and TOKATEST_REQUIRE_POSTGRES=1)", pytrace=False)
    pytest.skip(f"{reason}; install Debian's postgresql package or set TOKATEST_POSTGRES_URL")


@pytest.fixture
def postgres_database(postgres_url: str) -> Iterator[str]:
    """The URL of a new, empty database on the run's PostgreSQL server; dropped when the test ends."""
    with postgres_server.database(postgres_url) as url:
        yield url
