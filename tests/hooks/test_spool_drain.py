"""A running daemon drains the hook spool: on a timer, and at once when a hook that got through
finds one; hooks appending meanwhile lose and double nothing; a line the log refuses is set
aside and the rest lands."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from daemons import PATIENCE, FakePeer, Spawned, wait_for
from hook_support import run_hook

from daemon.client.spool import append_to_spool
from daemon.client.sync import Client
from daemon.ingest.spool import claimed_path, rejected_path
from daemon.paths import Paths, resolve_paths

MiB = 1024 * 1024


def _event(n: int, session: str = "spooled", size: int = 0) -> bytes:
    payload = {"n": n, "text": f"{n:08d}" * (size // 8)}
    return json.dumps({"session": session, "kind": "hook.stop", "key": f"k{n}", "payload": payload}).encode()


def _keys(client: Client, session: str = "spooled") -> list[str]:
    return [e["key"] for e in client.iter_events(session=session)] if _has(client, session) else []


def _has(client: Client, session: str) -> bool:
    return any(s["session"] == session for s in client.call("sessions.list")["sessions"])


def _wait_for_keys(client: Client, count: int, session: str = "spooled") -> list[str]:
    """The keys of ``session`` once it holds ``count`` events (the drain runs in the daemon)."""

    def enough() -> list[str] | None:
        keys = _keys(client, session)
        return keys if len(keys) >= count else None

    found: list[str] = wait_for(enough, f"{session} holds {count} events")
    return found


def test_a_running_daemon_drains_what_hooks_spooled_meanwhile(daemon: Spawned) -> None:
    paths = resolve_paths()
    for n in range(3):  # as hooks do while the daemon is hung or busy
        append_to_spool(paths.spool, _event(n))
    with daemon.client() as client:
        assert sorted(_wait_for_keys(client, 3)) == ["k0", "k1", "k2"]
    assert not paths.spool.exists() and not claimed_path(paths).exists()


def test_a_hook_that_gets_through_and_finds_a_spool_asks_for_it_to_be_drained() -> None:
    paths = resolve_paths()
    peer = FakePeer(paths, {"events": [{"seq": 1, "id": "0" * 64, "created": True}]})
    try:
        stop = json.dumps({"session_id": "s", "hook_event_name": "Stop"})
        assert run_hook(stop).returncode == 0
        append_to_spool(paths.spool, _event(0))
        assert run_hook(stop).returncode == 0
    finally:
        peer.close()
    assert [r["op"] for r in peer.requests] == ["events.append", "events.append", "spool.drain"]


def test_a_spooled_payload_lands_once_a_hook_gets_through(daemon: Spawned) -> None:
    paths = resolve_paths()
    append_to_spool(paths.spool, _event(0))
    assert run_hook(json.dumps({"session_id": "s", "hook_event_name": "Stop"})).returncode == 0
    with daemon.client() as client:
        assert _wait_for_keys(client, 1) == ["k0"]
        assert client.call("spool.drain") == {"draining": False}  # nothing left


WRITER = """
import sys
from daemon.client.spool import append_to_spool
path, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for n in range(first, first + count):
    line = '{"session":"spooled","kind":"hook.stop","key":"k%d","payload":{"n":%d}}' % (n, n)
    append_to_spool(path, line.encode())
"""


def test_hooks_appending_while_the_daemon_drains_lose_and_double_nothing(daemon: Spawned) -> None:
    paths = resolve_paths()
    writers, each = 4, 400
    processes = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(paths.spool), str(w * each), str(each)])
        for w in range(writers)
    ]
    with daemon.client() as client:
        while any(p.poll() is None for p in processes):
            client.call("spool.drain")  # claims as often as it can, racing the writers
        assert all(p.wait(PATIENCE) == 0 for p in processes)
        keys = _wait_for_keys(client, writers * each)
    assert len(keys) == writers * each and len(set(keys)) == len(keys)
    assert not rejected_path(paths).exists()


def test_a_line_the_log_refuses_is_set_aside_and_the_rest_lands(spawn: Any) -> None:
    paths = resolve_paths()
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    refused = b'{"session":"spooled","kind":"hook.stop","key":"nan","payload":{"x":NaN}}'
    for line in (_event(0), refused, _event(1)):
        append_to_spool(paths.spool, line)
    daemon = spawn()
    with daemon.client() as client:
        assert sorted(_wait_for_keys(client, 2)) == ["k0", "k1"]
    assert rejected_path(paths).read_bytes() == refused + b"\n"
    assert not paths.spool.exists() and not claimed_path(paths).exists()


def test_a_spool_of_large_payloads_is_committed_a_few_megabytes_at_a_time(spawn: Any) -> None:
    paths = resolve_paths()
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    for n in range(24):
        append_to_spool(paths.spool, _event(n, size=MiB))
    daemon = spawn()
    status = daemon.status()
    with daemon.client() as client:
        assert len(_keys(client)) == 24  # ingested before the socket answered
    assert status["commits"] >= 24 // 4  # at most about 4 MiB per transaction


def _spool_of(paths: Paths) -> list[dict[str, Any]]:
    return [json.loads(line) for line in paths.spool.read_bytes().splitlines()]


def test_a_memory_daemon_leaves_the_spool_alone_while_it_runs(spawn: Any) -> None:
    paths = resolve_paths()
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    append_to_spool(paths.spool, _event(0))
    daemon = spawn("--memory")
    with daemon.client() as client:
        assert client.call("spool.drain") == {"draining": False}  # a throw-away log would lose it
    assert [line["key"] for line in _spool_of(paths)] == ["k0"]
