"""The daemon's memory stays bounded whatever its clients send (daemon/server/connection.py):
unfinished request lines share daemon.max_buffered_bytes, a line past it is answered `busy`, a
line left unfinished is closed after daemon.line_timeout, a connection past
daemon.max_connections is answered `busy`; and a normal client is served throughout."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from daemon_support import RawConnection, Spawner, wait_for, write_config

from daemon.client.sync import Client
from daemon.paths import Paths

MIB = 1 << 20


def peak_rss(pid: int) -> int:
    """The most memory the process has held (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc: not Linux?")


def test_a_flood_of_unfinished_lines_keeps_memory_bounded_and_others_served(paths: Paths, spawn: Spawner) -> None:
    write_config(paths, f"[daemon]\nmax_buffered_bytes = {16 * MIB}\n")
    daemon = spawn()
    with daemon.client() as client:
        client.record("s", "note", {"before": True})
    before = peak_rss(daemon.process.pid)
    flood = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(200)]
    try:
        for sock in flood:
            sock.connect(str(paths.socket))
        for sock in flood:  # 200 lines of 3 MiB, each under max_line_bytes, none ever finished
            sock.sendall(b'{"id": 1, "op": "status", "args": {"pad": "' + b"x" * (3 * MIB))
        with Client(paths, autostart=False, timeout=30) as client:  # served while the flood holds on
            assert client.record("s", "note", {"during": True})["seq"] == 2
            assert client.call("status")["clients"] == 201
        grown = peak_rss(daemon.process.pid) - before
    finally:
        for sock in flood:
            sock.close()
    # Unbounded, the daemon holds the 600 MiB it was sent; bounded, the shared 16 MiB, each
    # connection's allowance and read buffers, and the allocator's slack.
    assert grown < 100 * MIB, f"the daemon grew by {grown / MIB:.0f} MiB"
    with daemon.client() as client:
        assert client.call("status")["events"] == 2


def test_a_line_past_the_shared_budget_is_answered_busy_and_its_connection_kept(paths: Paths, spawn: Spawner) -> None:
    # Three unfinished 600 KiB lines hold 3 x 536 KiB of the 2 MiB budget (each line's first 64 KiB
    # are free); a fourth of 700 KiB, read 256 KiB at a time, would need 636 KiB more.
    write_config(paths, f"[daemon]\nmax_line_bytes = {MIB}\nmax_buffered_bytes = {2 * MIB}\n")
    daemon = spawn()
    holders = [RawConnection(paths) for _ in range(3)]
    late = RawConnection(paths)
    try:
        for conn in holders:
            conn.send(b"x" * (600 * 1024))
        held = 3 * (600 - 64) * 1024
        wait_for(lambda: daemon.status()["buffered_bytes"] == held, "the daemon has read the unfinished lines")
        late.send(b"y" * (700 * 1024) + b"\n")
        busy = late.read()["error"]
        assert busy["code"] == "busy", busy
        assert "(daemon.max_buffered_bytes): this request was skipped" in busy["message"]
        assert busy["hint"] == "retry in a moment, or raise daemon.max_buffered_bytes"
        assert late.call(2, "hello")["ok"] is True  # its connection is still served
        for conn in holders:  # the three are read whole (and are not JSON)
            conn.send(b"\n")
            assert conn.read()["error"]["code"] == "bad_request"
        assert daemon.status()["buffered_bytes"] == 0
        late.send(b"y" * (700 * 1024) + b"\n")  # with the budget free again, the same line is read whole
        assert late.read()["error"]["code"] == "bad_request"
    finally:
        for conn in [*holders, late]:
            conn.close()


def test_an_unfinished_line_is_closed_after_line_timeout_and_idle_clients_are_not(paths: Paths, spawn: Spawner) -> None:
    write_config(paths, "[daemon]\nline_timeout = 0.5\n")
    spawn()
    with RawConnection(paths) as idle, RawConnection(paths) as stalled:
        assert idle.call(1, "hello")["ok"] is True
        stalled.send(b'{"id": 1, "op": "hel')
        answer = stalled.read()  # comes once the line has sat unfinished for 0.5 s
        assert answer["error"]["code"] == "bad_request"
        assert "left unfinished for 0.5 s" in answer["error"]["message"]
        assert stalled.read_line() == b""  # and the connection is closed
        assert idle.call(2, "hello")["ok"] is True  # an idle client between requests is left alone


def test_a_connection_past_the_cap_is_answered_busy(paths: Paths, spawn: Spawner) -> None:
    write_config(paths, "[daemon]\nmax_connections = 8\n")
    spawn()
    held = [RawConnection(paths) for _ in range(8)]
    try:
        for conn in held:
            assert conn.call(1, "hello")["ok"] is True
        with RawConnection(paths) as extra:
            answer = extra.read()
            assert answer["ok"] is False and answer["error"]["code"] == "busy", answer
            assert "daemon.max_connections" in answer["error"]["message"]
            assert extra.read_line() == b""
        held.pop().close()
        wait_for(lambda: _served(paths), "a connection is free again")
    finally:
        for conn in held:
            conn.close()


def _served(paths: Paths) -> bool:
    with RawConnection(paths) as conn:
        conn.send_request(1, "hello")
        answer = json.loads(conn.read_line() or b"null")
    return isinstance(answer, dict) and answer.get("ok") is True
