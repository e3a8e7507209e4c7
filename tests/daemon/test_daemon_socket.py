"""The socket: owner-only, one daemon per data dir, stale leftovers cleaned, paths that fit."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
from pathlib import Path
from typing import Any

import pytest
from daemon_support import (
    PATIENCE,
    RawConnection,
    Spawned,
    Spawner,
    as_other_user,
    bind_stale_socket,
    run_daemon_to_exit,
)

from daemon.client.aio import AsyncClient
from daemon.client.sync import Client
from daemon.paths import Paths, resolve_paths
from store.errors import ConfigError, DaemonUnavailable, TokaError


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_socket_is_0600_inside_a_0700_runtime_dir(daemon: Spawned) -> None:
    assert stat.S_ISSOCK(os.stat(daemon.paths.socket).st_mode)
    assert mode(daemon.paths.socket) == 0o600
    assert mode(daemon.paths.runtime_dir) == 0o700
    assert mode(daemon.paths.pidfile) & 0o077 == 0
    assert int(daemon.paths.pidfile.read_text()) == daemon.process.pid


def test_a_loose_runtime_dir_is_tightened(paths: Paths, spawn: Spawner) -> None:
    paths.runtime_dir.mkdir(parents=True)
    os.chmod(paths.runtime_dir, 0o755)
    spawn()
    assert mode(paths.runtime_dir) == 0o700
    assert mode(paths.socket) == 0o600


def test_second_daemon_on_the_same_home_refuses_and_the_first_keeps_serving(daemon: Spawned) -> None:
    with daemon.client() as client:
        client.record("s", "note", {})
        second = run_daemon_to_exit()
        assert second.returncode != 0
        assert "already running" in second.stderr, second.stderr
        assert str(daemon.process.pid) in second.stderr  # it names the running one
        # The first daemon, its socket and its pidfile are untouched, even for this connection.
        assert client.record("s", "note", {})["seq"] == 2
    assert daemon.paths.socket.exists()
    assert int(daemon.paths.pidfile.read_text()) == daemon.process.pid
    assert daemon.status()["events"] == 2
    assert daemon.stop() == 0


def test_stale_socket_file_is_replaced_at_start(paths: Paths, spawn: Spawner) -> None:
    bind_stale_socket(paths.socket)
    assert stat.S_ISSOCK(os.stat(paths.socket).st_mode)
    with pytest.raises(DaemonUnavailable):
        Client(paths, autostart=False)  # nothing listens on it
    daemon = spawn()
    with daemon.client() as client:
        assert client.server["pid"] == daemon.process.pid
    assert mode(paths.socket) == 0o600


def test_stale_pidfile_of_a_dead_daemon_does_not_block_start(paths: Paths, spawn: Spawner) -> None:
    paths.ensure_runtime_dir()
    paths.pidfile.write_text("999999\n")
    daemon = spawn()
    assert int(paths.pidfile.read_text()) == daemon.process.pid


@pytest.fixture
def long_home(toka_home: Path, monkeypatch: pytest.MonkeyPatch) -> Paths:
    home = toka_home / ("a-long-folder-name-" * 7)
    monkeypatch.setenv("TOKA_HOME", str(home))
    paths = resolve_paths()
    assert len(os.fsencode(paths.socket)) > 108
    return paths


def test_daemon_refuses_a_socket_path_that_is_too_long(long_home: Paths) -> None:
    result = run_daemon_to_exit()
    assert result.returncode == 2, result.stderr
    first, hint = result.stderr.strip().splitlines()[-2:]
    assert first.startswith("error: ") and "socket path" in first and str(long_home.socket) in first
    assert hint.startswith("hint: ") and "TOKA_HOME" in hint
    assert not long_home.runtime_dir.exists()


def test_client_refuses_a_socket_path_that_is_too_long(long_home: Paths) -> None:
    with pytest.raises(ConfigError) as raised:
        Client()  # autostart on: it must not try to start a daemon that cannot bind
    assert "socket path" in raised.value.message
    assert raised.value.hint is not None and "TOKA_HOME" in raised.value.hint
    assert "/tmp" not in raised.value.hint  # a directory others can write is no place for toka's files
    assert not long_home.runtime_dir.exists()


def test_async_client_refuses_a_socket_path_that_is_too_long(long_home: Paths) -> None:
    import asyncio

    async def connect() -> None:
        async with AsyncClient():
            pass

    with pytest.raises(ConfigError, match="socket path"):
        asyncio.run(connect())


def test_another_user_cannot_reach_the_socket(daemon: Spawned, can_switch_user: None) -> None:
    assert mode(daemon.paths.socket) == 0o600
    # TOKA_HOME itself is the test's private temp dir: open it, so that what keeps the other
    # user out is the runtime dir and socket modes the daemon set.
    os.chmod(daemon.paths.data_dir, 0o755)

    def connect() -> dict[str, Any]:
        try:
            Client(daemon.paths, autostart=False, timeout=5)
        except TokaError as exc:
            return {"raised": type(exc).__name__, "message": exc.message}
        return {"raised": None}

    outcome = as_other_user(connect)
    assert outcome["raised"] == "UnsafePath", outcome
    assert f"{daemon.paths.runtime_dir} belongs to uid {os.getuid()}, not to you" in outcome["message"], outcome
    assert daemon.status()["clients"] == 1


def test_daemon_refuses_a_client_of_another_uid_even_past_the_file_modes(
    daemon: Spawned, can_switch_user: None
) -> None:
    """Defence in depth: with the modes opened up by hand, the peer-credential check still refuses."""
    assert mode(daemon.paths.socket) == 0o600
    for path in (daemon.paths.data_dir, daemon.paths.runtime_dir):
        os.chmod(path, 0o755)
    os.chmod(daemon.paths.socket, 0o666)

    def talk() -> dict[str, Any]:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(5)
        sock.connect(str(daemon.paths.socket))
        with sock, sock.makefile("rb") as reader:
            lines = reader.readlines()  # the daemon answers at once, unasked, and hangs up
            with contextlib.suppress(OSError):  # and whatever it is sent after that is not read
                sock.sendall(b'{"id": 1, "op": "events.append", "args": {"event": {"session": "x", "kind": "k"}}}\n')
        return {"lines": [json.loads(line) for line in lines]}

    outcome = as_other_user(talk)
    assert "lines" in outcome, outcome
    [answer] = outcome["lines"]
    assert answer["ok"] is False and "own user only" in answer["error"]["message"], answer
    status = daemon.status()
    assert (status["events"], status["clients"]) == (0, 1)
    with RawConnection(daemon.paths) as conn:  # the owner is still served
        assert conn.call(1, "hello")["ok"] is True


def full_listener(path: Path) -> tuple[socket.socket, list[socket.socket]]:
    """A listening socket that accepts nothing, with its accept queue filled until connect() says EAGAIN."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    queued = []
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            sock.connect(str(path))
        except BlockingIOError:
            sock.close()
            return listener, queued
        queued.append(sock)


def test_a_full_accept_queue_is_retried_then_reported_as_overloaded(tmp_path: Path) -> None:
    from daemon.client.socket import connect_socket

    listener, queued = full_listener(tmp_path / "s")
    try:
        with pytest.raises(DaemonUnavailable, match="queue stayed full for 0.05 s") as raised:
            connect_socket(tmp_path / "s", timeout=5, backlog_retry=0.05)
        assert type(raised.value) is DaemonUnavailable  # not DaemonNotRunning: autostart would not help
    finally:
        for sock in [listener, *queued]:
            sock.close()


def test_a_client_meeting_a_full_queue_gets_in_once_it_drains(tmp_path: Path) -> None:
    """connect() retries EAGAIN while the daemon works through its queue, instead of giving up at once."""
    import threading

    from daemon.client.socket import connect_socket

    listener, queued = full_listener(tmp_path / "s")
    accepted: list[socket.socket] = []
    listener.settimeout(PATIENCE)

    def drain() -> None:
        while len(accepted) < len(queued) + 1:
            accepted.append(listener.accept()[0])

    drainer = threading.Thread(target=drain)
    drainer.start()
    try:
        connect_socket(tmp_path / "s", timeout=5, backlog_retry=PATIENCE).close()
        drainer.join(PATIENCE)
        assert len(accepted) == len(queued) + 1
    finally:
        for sock in [listener, *queued, *accepted]:
            sock.close()


def test_the_daemon_queues_a_burst_of_connections_past_asyncios_default(daemon: Spawned) -> None:
    """200 clients connecting while the daemon accepts nothing (asyncio's default queue holds 100)
    are all queued, and all answered once it runs again."""
    import signal

    from daemon.client.socket import connect_socket

    daemon.process.send_signal(signal.SIGSTOP)
    try:
        socks = [connect_socket(daemon.paths.socket, timeout=PATIENCE, backlog_retry=0) for _ in range(200)]
    finally:
        daemon.process.send_signal(signal.SIGCONT)
    try:
        for n, sock in enumerate(socks):
            sock.sendall(json.dumps({"id": n, "op": "hello", "args": {}}).encode() + b"\n")
        for n, sock in enumerate(socks):
            with sock.makefile("rb") as reader:
                assert json.loads(reader.readline())["id"] == n
    finally:
        for sock in socks:
            sock.close()
