"""With the daemon down, hooks spool (never autostart it); the daemon ingests the spool exactly once."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from hook_support import TOKA, fixture_files, payloads, run_hook, start_daemon, stop_daemon

from daemon.client.spool import append_to_spool
from daemon.client.sync import Client
from daemon.ingest.spool import claimed_path, rejected_path
from daemon.paths import Paths, resolve_paths


def _sample() -> list[bytes]:
    """One payload of every fixture file, as the bytes a hook reads."""
    return [json.dumps(payloads(path)[0]).encode() for path in fixture_files()]


def _spool_lines(paths: Paths) -> list[dict[str, object]]:
    return [json.loads(line) for line in paths.spool.read_bytes().splitlines()]


def _log_keys(paths: Paths) -> list[str]:
    process = start_daemon(paths)
    try:
        with Client(paths, autostart=False) as client:
            keys = [e["key"] for e in client.iter_events()]
    finally:
        stop_daemon(process)
    return keys


def test_hooks_spool_while_the_daemon_is_down_and_land_once(toka_home: Path) -> None:
    paths = resolve_paths()
    sample = _sample()
    for raw in sample:
        result = run_hook(raw)
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert not paths.socket.exists() and not paths.pidfile.exists()  # not autostarted
    spooled = _spool_lines(paths)
    keys = {line["key"] for line in spooled}
    assert len(spooled) == len(keys) == len(sample)

    first = _log_keys(paths)
    assert sorted(first) == sorted(keys)  # none lost, none doubled
    assert not paths.spool.exists() and not claimed_path(paths).exists()
    assert _log_keys(paths) == first  # a second start ingests nothing more


def test_a_claimed_spool_left_by_a_crash_is_not_doubled(toka_home: Path) -> None:
    paths = resolve_paths()
    for raw in _sample():
        assert run_hook(raw).returncode == 0
    lines = paths.spool.read_bytes()
    first = _log_keys(paths)
    # A daemon killed after the append committed but before it deleted the claimed file; more
    # hooks spooled meanwhile, some of them retries.
    claimed_path(paths).write_bytes(lines)
    paths.spool.write_bytes(lines)
    extra = json.dumps({"session_id": "late", "hook_event_name": "Stop"}).encode()
    assert run_hook(extra).returncode == 0
    second = _log_keys(paths)
    assert len(second) == len(first) + 1 and set(first) < set(second)
    assert not paths.spool.exists() and not claimed_path(paths).exists()
    assert sorted(_log_keys(paths)) == sorted(second)


def test_concurrent_hooks_write_whole_lines(toka_home: Path) -> None:
    paths = resolve_paths()
    big = payloads(max(fixture_files(), key=lambda p: p.stat().st_size))[0]
    processes = []
    for n in range(20):
        raw = json.dumps({**big, "session_id": f"s{n % 3}", "n": n}).encode()  # ~100 kB each at most
        processes.append(
            subprocess.Popen(
                [str(TOKA), "hook", "claude-code"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        )
        assert processes[-1].stdin is not None
        processes[-1].stdin.write(raw)
    for process in processes:
        assert process.stdin is not None
        process.stdin.close()
    for process in processes:
        assert process.wait(30) == 0
        assert process.stdout is not None and process.stdout.read() == b""
        assert process.stderr is not None and process.stderr.read() == b""
        process.stdout.close()
        process.stderr.close()
    spooled = _spool_lines(paths)
    assert sorted(line["payload"]["n"] for line in spooled) == list(range(20))  # type: ignore[index]
    assert len(_log_keys(paths)) == 20


def test_a_line_that_is_no_event_is_set_aside_not_dropped(toka_home: Path) -> None:
    paths = resolve_paths()
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    paths.spool.write_bytes(b'{"half a line')  # a hook killed mid-write
    assert run_hook(json.dumps({"session_id": "s", "hook_event_name": "Stop"})).returncode == 0
    append_to_spool(paths.spool, b"[1, 2]")
    assert len(paths.spool.read_bytes().splitlines()) == 3
    assert len(_log_keys(paths)) == 1
    assert rejected_path(paths).read_bytes() == b'{"half a line\n[1, 2]\n'
    assert not paths.spool.exists()


def test_a_memory_daemon_leaves_the_spool_for_a_durable_one(toka_home: Path) -> None:
    paths = resolve_paths()
    assert run_hook(json.dumps({"session_id": "s", "hook_event_name": "Stop"})).returncode == 0
    stop_daemon(start_daemon(paths, "--memory"))
    assert paths.spool.exists()
    assert len(_log_keys(paths)) == 1
