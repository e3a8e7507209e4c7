"""Autostart, probe and the version check, as a client on a fresh machine meets them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from daemon_support import FakePeer, Spawned, bind_stale_socket, wait_for, write_config
from damage import corrupt_table

from daemon.client.aio import AsyncClient
from daemon.client.sync import Client, probe
from daemon.paths import Paths
from daemon.version import PROTOCOL_VERSION, VERSION
from store.errors import ConfigError, DaemonUnavailable, ProtocolError

# The start-up itself is what these tests are about: `python -m daemon`, not a warm fork.
pytestmark = pytest.mark.cold_autostart


def autostarted_pid(paths: Paths) -> int:
    return int(paths.pidfile.read_text())


@pytest.fixture
def stop_autostarted(paths: Paths) -> Iterator[None]:
    """Stop, by the pid it wrote, the daemon a test's client started in the background."""
    yield
    try:
        with Client(paths, autostart=False, timeout=5) as client:
            client.call("shutdown")
    except DaemonUnavailable:
        return
    wait_for(lambda: not paths.pidfile.exists(), "the autostarted daemon stopped")


def test_client_starts_a_daemon_on_first_use(paths: Paths, stop_autostarted: None) -> None:
    assert not paths.socket.exists()
    assert probe(paths).state == "unreachable"
    with Client() as client:
        server = client.server
        assert client.record("s", "note", {"text": "hi"})["seq"] == 1
    assert server["version"] == VERSION and server["protocol"] == PROTOCOL_VERSION
    assert autostarted_pid(paths) == server["pid"]
    log = paths.log_file.read_text()
    assert paths.log_file == paths.data_dir / "logs" / "daemon.log"
    assert "listening on" in log and str(server["pid"]) in log
    # The next client finds it running and starts nothing.
    with Client() as client:
        assert client.server["pid"] == server["pid"]
        assert client.call("status")["events"] == 1
    assert paths.log_file.read_text().count("listening on") == 1


def test_the_autostarted_daemon_is_python_m_daemon_on_its_own(paths: Paths, stop_autostarted: None) -> None:
    """`python -P -m daemon` (no project folder on its path), in `/` and in a session of its own:
    the terminal's hang-up and the shell's job control do not reach it."""
    with Client() as client:
        pid = client.server["pid"]
    command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert command[1:4] == [b"-P", b"-m", b"daemon"]
    assert os.readlink(f"/proc/{pid}/cwd") == "/"
    assert os.getsid(pid) == pid != os.getsid(0)


def test_autostart_replaces_a_stale_socket(paths: Paths, stop_autostarted: None) -> None:
    bind_stale_socket(paths.socket)
    with Client() as client:
        assert client.server["pid"] == autostarted_pid(paths)


CLIENT_SCRIPT = """
import json, sys
from daemon.client.sync import Client
print("ready", flush=True)
sys.stdin.readline()  # start together
with Client() as client:
    print(json.dumps(client.server))
"""


def test_six_clients_at_once_start_exactly_one_daemon(paths: Paths, stop_autostarted: None) -> None:
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", CLIENT_SCRIPT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    for process in processes:  # every one has imported the client before the go
        assert process.stdout is not None
        assert process.stdout.readline() == "ready\n"
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    outputs = [process.communicate(timeout=30) for process in processes]
    for process, (_, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err
    pids = {json.loads(out)["pid"] for out, _ in outputs}
    assert pids == {autostarted_pid(paths)}
    log = paths.log_file.read_text()
    assert log.count("listening on") == 1, log
    assert "already running" not in log


def test_async_client_starts_a_daemon_too(paths: Paths, stop_autostarted: None) -> None:
    async def main() -> int:
        async with AsyncClient() as client:
            return int((await client.call("hello"))["pid"])

    assert asyncio.run(main()) == autostarted_pid(paths)


def garbage_database(paths: Paths) -> str:
    paths.database.write_bytes(os.urandom(8192))
    return "not a readable toka database"


def database_is_a_directory(paths: Paths) -> str:
    paths.database.mkdir()
    return "cannot write the database"


def socket_is_a_directory(paths: Paths) -> str:
    # Fails after the store opened, when the daemon clears the way for its socket.
    paths.socket.mkdir(parents=True)
    return str(paths.socket)


def damaged_events_page(paths: Paths) -> str:
    # The schema reads, so the store opens; the log's own page does not.
    with Client() as client:
        client.append([{"kind": "message", "payload": {"n": n}} for n in range(20)], session="s")
        client.call("shutdown")
    wait_for(lambda: not paths.pidfile.exists(), "the daemon stopped")
    corrupt_table(paths.database, "events")
    return "malformed"


@pytest.mark.parametrize(
    "break_it",
    [garbage_database, database_is_a_directory, socket_is_a_directory, damaged_events_page],
)
def test_autostart_failure_quotes_the_daemons_error_quickly(paths: Paths, break_it: Any) -> None:
    write_config(paths, "[daemon]\nstart_timeout = 60\n")
    quoted = break_it(paths)
    started = time.monotonic()
    with pytest.raises(DaemonUnavailable) as raised:
        Client()
    elapsed = time.monotonic() - started
    assert elapsed < 10, f"the client waited {elapsed:.1f}s for a daemon that had already exited"
    assert "exited at start-up" in raised.value.message
    assert quoted in raised.value.message, raised.value.message
    assert raised.value.hint is not None and str(paths.log_file) in raised.value.hint
    assert not paths.socket.is_socket() and not paths.pidfile.exists()
    assert not paths.start_failure.exists(), "the client takes the failure the daemon left"


def test_a_setting_only_the_daemon_reads_is_refused_as_the_clients_own(paths: Paths) -> None:
    # The client reads [store] and [daemon] itself; the daemon it starts refuses the rest, and the
    # client raises that ConfigError as if it had read the file itself: one line, exit code 2.
    write_config(paths, "[lifecycle]\nwarning_pct = 95\n")
    with pytest.raises(ConfigError) as raised:
        Client()
    assert raised.value.message == (
        f"lifecycle.warning_pct (95.0, from {paths.config_file}) must be below"
        " lifecycle.critical_pct (90.0, the default)"
    )
    assert raised.value.hint == "change one of them: toka config set lifecycle.warning_pct VALUE"
    assert raised.value.exit_code == 2
    assert not paths.pidfile.exists() and not paths.start_failure.exists()
    # A config error past the settings (a malformed state machine) is still the daemon's exit.
    write_config(paths, "[state.machines.x]\nstates = 3\n")
    with pytest.raises(DaemonUnavailable) as unavailable:
        Client()
    assert "exited at start-up" in unavailable.value.message and "machine x" in unavailable.value.message


def test_home_that_is_a_file_fails_quickly_and_names_the_path(toka_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = toka_home / "not-a-dir"
    home.write_text("a regular file\n")
    monkeypatch.setenv("TOKA_HOME", str(home))
    started = time.monotonic()
    with pytest.raises(DaemonUnavailable) as raised:
        Client()
    assert time.monotonic() - started < 5
    assert str(home) in raised.value.message
    assert home.read_text() == "a regular file\n"


def test_probe_says_unreachable_without_starting_anything(paths: Paths) -> None:
    result = probe(paths)
    assert result.state == "unreachable" and result.server is None
    assert not paths.socket.exists() and not paths.pidfile.exists()


def test_probe_says_running_for_this_tokas_daemon(daemon: Spawned) -> None:
    result = probe(daemon.paths)
    assert result.state == "running"
    assert result.server == {
        "version": VERSION,
        "protocol": PROTOCOL_VERSION,
        "pid": daemon.process.pid,
        "max_line_bytes": 4 * 1024 * 1024,
    }


def test_probe_says_needs_restart_for_another_version(paths: Paths) -> None:
    peer = FakePeer(paths, {"version": "0.0.1", "protocol": PROTOCOL_VERSION, "pid": 1})
    try:
        result = probe(paths)
    finally:
        peer.close()
    assert result.state == "needs_restart"
    assert "0.0.1" in result.detail and "toka daemon restart" in result.detail
    assert peer.requests and peer.requests[0]["op"] == "hello"


def test_probe_says_unreachable_for_a_peer_that_is_not_toka(paths: Paths) -> None:
    peer = FakePeer(paths, None)
    try:
        result = probe(paths)
    finally:
        peer.close()
    assert result.state == "unreachable"
    assert "not as a toka daemon" in result.detail


OTHER_PROTOCOL = {"version": "9.0.0", "protocol": PROTOCOL_VERSION + 1, "pid": 1}


def test_client_refuses_a_daemon_of_another_protocol(paths: Paths) -> None:
    peer = FakePeer(paths, OTHER_PROTOCOL)
    try:
        with pytest.raises(ProtocolError) as raised:
            Client()  # autostart on: a peer answers, so nothing is started
    finally:
        peer.close()
    assert str(PROTOCOL_VERSION + 1) in raised.value.message
    assert raised.value.hint is not None and "toka daemon restart" in raised.value.hint
    assert [r["op"] for r in peer.requests] == ["hello"]  # it asked nothing else
    assert not paths.pidfile.exists()


def test_async_client_refuses_a_daemon_of_another_protocol(paths: Paths) -> None:
    async def connect() -> None:
        async with AsyncClient(autostart=False):
            pass

    peer = FakePeer(paths, OTHER_PROTOCOL)
    try:
        with pytest.raises(ProtocolError) as raised:
            asyncio.run(connect())
    finally:
        peer.close()
    assert raised.value.hint is not None and "toka daemon restart" in raised.value.hint


def test_client_without_autostart_reports_no_daemon(paths: Paths) -> None:
    with pytest.raises(DaemonUnavailable) as raised:
        Client(autostart=False)
    assert "not running" in raised.value.message
    assert not paths.pidfile.exists() and not paths.log_file.exists()  # nothing was started
