"""Whatever the daemon cannot do with a hook payload, the spool keeps: a read-only database, a
disk that takes no more, a payload over the daemon's line limit. A payload is lost only when the
spool cannot take it either, and the hook says so."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from daemons import spawn_daemon
from hook_support import run_hook

from daemon.client.sync import Client
from daemon.ingest.spool import claimed_path
from daemon.paths import Paths, resolve_paths

MiB = 1024 * 1024


def _payload(session: str = "s", size: int = 0) -> dict[str, Any]:
    # Random text: the store compresses payloads, and a disk limit must meet the bytes it writes.
    return {"session_id": session, "hook_event_name": "PostToolUse", "tool_response": os.urandom(size // 2).hex()}


def _spooled(paths: Paths) -> list[dict[str, Any]]:
    """What waits in the spool: the spool itself, and what a drain of the running daemon claimed
    but could not store (it stays claimed for the next start, daemon/ingest/spool.py)."""
    files = [path for path in (claimed_path(paths), paths.spool) if path.exists()]
    return [json.loads(line) for path in files for line in path.read_bytes().splitlines()]


def _logged(paths: Paths, tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    """The events in the log, read by a daemon started for it (which ingests the spool first)."""
    daemon = spawn_daemon(paths, tmp_path / "reader.log", *args)
    try:
        with Client(paths, autostart=False) as client:
            return list(client.iter_events())
    finally:
        daemon.stop()


def _assert_spooled_with_a_word(result: subprocess.CompletedProcess[bytes], contains: str) -> None:
    assert (result.returncode, result.stdout) == (0, b"")
    note = result.stderr.decode()
    assert note.startswith("toka hook: spooled: ") and contains in note and note.count("\n") == 1, note


def _make_read_only(path: Path) -> None:
    if os.geteuid() == 0:  # root writes through file modes: only the immutable flag stops it
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)]).returncode != 0:
            pytest.skip("running as root on a file system without chattr +i: no way to make a file read-only")
    else:
        path.chmod(stat.S_IRUSR)


def _make_writable(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], check=True)
    path.chmod(stat.S_IRUSR | stat.S_IWUSR)


@pytest.fixture
def read_only_database(tmp_path: Path) -> Iterator[Paths]:
    """A database made read-only; writable again after the test."""
    paths = resolve_paths()
    _logged(paths, tmp_path)  # creates it
    database = paths.data_dir / "toka.db"
    _make_read_only(database)
    try:
        yield paths
    finally:
        _make_writable(database)


def test_a_read_only_database_spools_the_payload_and_it_lands_once_writable(
    read_only_database: Paths, tmp_path: Path
) -> None:
    paths = read_only_database
    daemon = spawn_daemon(paths, tmp_path / "daemon.log")
    try:
        result = run_hook(json.dumps(_payload("ro")))
    finally:
        daemon.stop()
    _assert_spooled_with_a_word(result, "cannot write the database")
    [spooled] = _spooled(paths)
    _make_writable(paths.data_dir / "toka.db")
    events = [e for e in _logged(paths, tmp_path) if e["session"] == "ro"]
    assert [e["key"] for e in events] == [spooled["key"]]
    assert not paths.spool.exists()


def _disk_of(limit: int) -> Any:
    def limited() -> None:  # in the daemon's process, before it starts: no file it writes may pass ``limit``
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it then fails (EFBIG) instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limited


def test_a_disk_that_takes_no_more_spools_the_payload_and_it_lands_later(tmp_path: Path) -> None:
    paths = resolve_paths()
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    daemon = spawn_daemon(paths, tmp_path / "daemon.log", preexec=_disk_of(MiB))
    try:
        result = run_hook(json.dumps(_payload("full", 3 * MiB)))
    finally:
        daemon.stop()
    _assert_spooled_with_a_word(result, "database")
    [spooled] = _spooled(paths)
    events = [e for e in _logged(paths, tmp_path) if e["session"] == "full"]
    assert [e["key"] for e in events] == [spooled["key"]]
    assert events[0]["payload"] == spooled["payload"]


def test_a_payload_over_the_line_limit_is_spooled_and_stored_whole(tmp_path: Path) -> None:
    paths = resolve_paths()
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    small_lines = {"TOKA_MAX_LINE_BYTES": str(MiB)}
    payload = _payload("big", 2 * MiB)
    daemon = spawn_daemon(paths, tmp_path / "daemon.log", env=small_lines)
    try:
        result = run_hook(json.dumps(payload), env=small_lines)
    finally:
        daemon.stop()
    _assert_spooled_with_a_word(result, "request line exceeds")
    events = [e for e in _logged(paths, tmp_path) if e["session"] == "big"]
    assert [e["payload"] for e in events] == [payload]  # the daemon ingests the spool in its own process


def test_a_payload_is_lost_only_when_the_spool_cannot_take_it_either(tmp_path: Path) -> None:
    paths = resolve_paths()
    paths.spool.mkdir(parents=True)  # no daemon, and no file can be written where the spool goes
    result = run_hook(json.dumps(_payload("lost")))
    assert (result.returncode, result.stdout) == (0, b"")
    note = result.stderr.decode()
    assert note.startswith("toka hook: nothing recorded: ") and str(paths.spool) in note and note.count("\n") == 1
