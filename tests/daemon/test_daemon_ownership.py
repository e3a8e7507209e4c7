"""What toka keeps is its user's own (daemon/ownership.py): directories and files that another user
owns or every user can write are refused with the fix, links among toka's files are not followed,
and a process of another uid on the socket is sent nothing.

The tests run as root here, so "another user" is uid 65534: files are chowned to it, and the
foreign listener is a process that dropped to it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_support import OTHER_UID, PATIENCE, ForeignListener, Spawner

from daemon.client.aio import AsyncClient
from daemon.client.sync import Client
from daemon.paths import Paths
from store.errors import UnsafePath

PAYLOAD = json.dumps({"session_id": "s-own", "hook_event_name": "PreToolUse", "tool_name": "Read"})


TOKA = Path(sys.executable).parent / "toka"


def toka(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The real `toka ARGS`, in a child process with this test's environment."""
    return subprocess.run([str(TOKA), *args], input=stdin, capture_output=True, text=True, timeout=PATIENCE * 2)


def run_hook(payload: str = PAYLOAD) -> subprocess.CompletedProcess[str]:
    return toka("hook", "claude-code", stdin=payload)


def assert_error(stderr: str, contains: str) -> str:
    """stderr is one `error:` line holding ``contains`` and a `hint:` line; the error line."""
    lines = stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: ") and lines[1].startswith("hint: "), stderr
    assert contains in lines[0], stderr
    return lines[0]


def doctor_files() -> dict[str, str]:
    checks = json.loads(toka("doctor", "--json").stdout)["checks"]
    (files,) = [check for check in checks if check["name"] == "files"]
    return dict(files)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture(autouse=True)
def as_root() -> None:
    if os.getuid() != 0:
        pytest.skip("another user's files and processes need root to make (chown, setuid)")


@pytest.fixture
def foreign(paths: Paths) -> Iterator[ForeignListener]:
    """Another user's process listening at toka's socket, in a runtime dir of toka's user."""
    lair = Path(tempfile.mkdtemp(prefix="tklair", dir="/tmp"))  # where that user can reach: not under root's 0700 dirs
    listener = ForeignListener(paths.socket, lair)
    try:
        yield listener
    finally:
        listener.close()
        shutil.rmtree(lair, ignore_errors=True)


def test_the_client_sends_nothing_to_a_process_of_another_user(paths: Paths, foreign: ForeignListener) -> None:
    with pytest.raises(UnsafePath) as raised:
        Client(paths, autostart=False)
    assert f"the process listening on {paths.socket} runs as uid {OTHER_UID}" in raised.value.message
    assert raised.value.hint is not None and "TOKA_HOME" in raised.value.hint

    async def connect() -> None:
        async with AsyncClient(paths, autostart=False):
            pass

    with pytest.raises(UnsafePath, match=f"runs as uid {OTHER_UID}"):
        asyncio.run(connect())
    recorded = toka("record", "s", "note", '{"secret": "kept"}')
    assert recorded.returncode == 2
    assert_error(recorded.stderr, contains=f"runs as uid {OTHER_UID}")
    assert foreign.received == b""


def test_the_hook_spools_rather_than_tell_another_users_process(paths: Paths, foreign: ForeignListener) -> None:
    result = run_hook()
    assert result.returncode == 0 and result.stdout == ""
    assert f"spooled: the process listening on {paths.socket} runs as uid {OTHER_UID}" in result.stderr
    assert foreign.received == b""
    [line] = paths.spool.read_bytes().splitlines()
    assert json.loads(line)["session"] == "s-own"


@pytest.mark.parametrize("mode_bits", [0o1777, 0o755], ids=["shared_like_tmp", "private"])
def test_toka_home_of_another_user_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode_bits: int) -> None:
    home = tmp_path / "toka"  # as /tmp/toka made by someone else first
    home.mkdir()
    os.chown(home, OTHER_UID, OTHER_UID)
    os.chmod(home, mode_bits)
    monkeypatch.setenv("TOKA_HOME", str(home))
    status = toka("status")
    assert status.returncode == 2
    assert_error(status.stderr, contains=f"{home}, above {home / 'run'}, belongs to uid {OTHER_UID}")
    assert "TOKA_HOME" in status.stderr.splitlines()[1]
    hook = run_hook()
    assert hook.returncode == 0 and "nothing recorded" in hook.stderr
    assert list(home.iterdir()) == []  # nothing written into it, and nothing chmodded
    assert mode(home) == mode_bits


@pytest.mark.parametrize("owner", [0, OTHER_UID], ids=["own", "other_user"])
def test_a_runtime_dir_linked_to_a_shared_dir_is_refused_and_left_alone(
    paths: Paths, tmp_path: Path, owner: int
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chown(shared, owner, owner)
    os.chmod(shared, 0o1777)
    paths.runtime_dir.symlink_to(shared)
    status = toka("status")
    assert status.returncode == 2
    assert_error(status.stderr, contains=f"{paths.runtime_dir} (a link to {shared})")
    assert mode(shared) == 0o1777  # not chmodded to 0700
    assert list(shared.iterdir()) == []  # no socket, pidfile or lock put there


def test_a_linked_spool_is_neither_appended_to_nor_ingested(paths: Paths, tmp_path: Path, spawn: Spawner) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("a line of someone else's file\n")
    paths.spool.symlink_to(victim)
    result = run_hook()
    assert result.returncode == 0
    assert f"nothing recorded: {paths.spool} is a symbolic link" in result.stderr
    spawn()  # ingests the spool at start-up
    assert victim.read_text() == "a line of someone else's file\n"
    assert not paths.spool.with_name(paths.spool.name + ".rejected").exists()
    assert paths.spool.is_symlink()  # left for the user to look at


def test_a_spool_of_another_user_is_not_written(paths: Paths) -> None:
    paths.spool.write_text("")
    os.chown(paths.spool, OTHER_UID, OTHER_UID)
    result = run_hook()
    assert result.returncode == 0
    assert f"nothing recorded: {paths.spool} belongs to uid {OTHER_UID}" in result.stderr
    assert paths.spool.read_text() == ""


@pytest.mark.parametrize("kept", ["database", "pidfile", "log_file"])
def test_the_daemon_does_not_start_on_files_of_another_user(paths: Paths, kept: str) -> None:
    path: Path = getattr(paths, kept)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_bytes(b"")
    os.chown(path, OTHER_UID, OTHER_UID)
    status = toka("status")
    assert status.returncode != 0
    assert f"{path} belongs to uid {OTHER_UID}" in status.stderr
    assert path.read_bytes() == b""


@pytest.mark.parametrize("suffix", ["-tip", "-damaged"])
def test_a_link_beside_the_database_is_refused_and_its_target_untouched(
    paths: Paths, tmp_path: Path, suffix: str
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("a line of someone else's file\n")
    paths.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    link = Path(f"{paths.database}{suffix}")
    link.symlink_to(victim)
    status = toka("status")
    assert status.returncode != 0
    assert_error(status.stderr, f"{link} is a symbolic link where toka keeps a file of its own")
    assert victim.read_text() == "a line of someone else's file\n"


def test_a_directory_every_user_can_write_above_toka_home_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    os.chmod(open_dir, 0o777)  # no sticky bit: anyone may rename what is inside
    monkeypatch.setenv("TOKA_HOME", str(open_dir / "toka"))
    status = toka("status")
    assert status.returncode == 2
    assert_error(status.stderr, contains=f"{open_dir}, above {open_dir / 'toka'}")
    assert "is writable by every user: anyone could swap toka's directory" in status.stderr
    assert list(open_dir.iterdir()) == []  # refused before anything was made there
    os.chmod(open_dir, 0o1777)  # as /tmp: the sticky bit keeps others' hands off toka's directory
    assert toka("status").returncode == 0


def test_the_users_own_loose_files_are_tightened(paths: Paths) -> None:
    paths.data_dir.chmod(0o755)
    paths.spool.write_text("")
    paths.spool.chmod(0o644)
    assert run_hook().returncode == 0
    assert (mode(paths.data_dir), mode(paths.spool)) == (0o700, 0o600)
    assert len(paths.spool.read_bytes().splitlines()) == 1


def test_doctor_names_what_is_not_the_users(paths: Paths) -> None:
    paths.spool.write_text("")
    paths.spool.chmod(0o644)
    files = doctor_files()
    assert (files["status"], files["detail"]) == ("warning", f"{paths.spool} is 0644, not 0600")
    assert mode(paths.spool) == 0o644  # doctor changes nothing
    os.chown(paths.spool, OTHER_UID, OTHER_UID)
    files = doctor_files()
    assert files["status"] == "problem" and f"{paths.spool} belongs to uid {OTHER_UID}" in files["detail"]
