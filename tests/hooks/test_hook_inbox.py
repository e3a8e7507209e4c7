"""The recording hooks' inbox: the shell command `toka integrate` installs drops each payload into
``hooks.inbox``, and the daemon makes of it the event `toka hook` would have recorded, live while
it runs and at its next start when it was down; what cannot be an event is set aside, never lost
and never in the daemon's way."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

from daemons import Spawned, wait_for
from hook_support import TOKA, run_hook, start_daemon, stop_daemon

from daemon.client.sync import Client
from daemon.ingest.inbox import STALE_S
from daemon.paths import Paths, resolve_paths
from toka_cli.integrate.inbox import inbox_command


def drop(payload: dict[str, Any] | bytes, agent: str = "claude-code") -> subprocess.CompletedProcess[bytes]:
    """Run the installed command as Claude Code runs a hook: ``/bin/sh -c``, the payload on stdin."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run(
        ["/bin/sh", "-c", inbox_command(agent, "/nonexistent/unused")],
        input=data,
        capture_output=True,
        env=dict(os.environ),  # TOKA_HOME: the test's
        timeout=30,
    )


def events_of(client: Client, session: str) -> list[dict[str, Any]]:
    sessions = {s["session"] for s in client.call("sessions.list")["sessions"]}
    return list(client.iter_events(session=session)) if session in sessions else []


def wait_for_events(client: Client, session: str, count: int) -> list[dict[str, Any]]:
    def enough() -> list[dict[str, Any]] | None:
        found = events_of(client, session)
        return found if len(found) >= count else None

    found: list[dict[str, Any]] = wait_for(enough, f"{session} holds {count} events")
    return found


def inbox_files(paths: Paths) -> list[str]:
    return sorted(os.listdir(paths.inbox)) if paths.inbox.exists() else []


def rejected_files(paths: Paths) -> list[str]:
    return sorted(os.listdir(paths.inbox_rejected)) if paths.inbox_rejected.exists() else []


TOOL = {
    "session_id": "inbox-s",
    "hook_event_name": "PostToolUse",
    "tool_name": "Read",
    "tool_use_id": "toolu_01",
    "tool_input": {"file_path": "/p/a.txt"},
    "tool_response": {"text": "é ✓"},
    "cwd": "/p",
}
STOP = {"session_id": "inbox-s", "hook_event_name": "Stop", "stop_hook_active": False, "cwd": "/p"}


def test_the_command_makes_the_inbox_private_and_drops_the_payload_unchanged() -> None:
    paths = resolve_paths()
    raw = json.dumps(TOOL, ensure_ascii=False).encode() + b"\n"
    assert not paths.inbox.exists()
    done = drop(raw)
    assert (done.returncode, done.stderr) == (0, b"")
    (first,) = inbox_files(paths)  # no inbox yet: made, and a name from mktemp
    assert re.fullmatch(r"claude-code\.[A-Za-z0-9]{10}", first)
    assert drop(raw).returncode == 0
    (second,) = set(inbox_files(paths)) - {first}  # then the shell's pid names it
    assert re.fullmatch(r"claude-code\.[0-9]+", second)
    for name in (first, second):
        assert (paths.inbox / name).read_bytes() == raw
        assert (paths.inbox / name).stat().st_mode & 0o777 == 0o600
    assert paths.inbox.stat().st_mode & 0o777 == 0o700


def test_a_name_taken_already_gets_another_one_and_nothing_is_overwritten() -> None:
    paths = resolve_paths()
    paths.inbox.mkdir(mode=0o700, parents=True)
    # The shell's pid's name taken (a pid used again before the daemon took the file): the command
    # must make another name with mktemp, not write into that file.
    taken = paths.inbox / "claude-code.taken"
    taken.write_bytes(b"{}")
    done = subprocess.run(
        [
            "/bin/sh",
            "-c",
            f'ln "{taken}" "{paths.inbox}/claude-code.$$" && exec /bin/sh -c "$0"',
            inbox_command("claude-code"),
        ],
        input=json.dumps(STOP).encode(),
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    files = {name: (paths.inbox / name).read_bytes() for name in inbox_files(paths)}
    assert taken.read_bytes() == b"{}"  # untouched, under both its names
    assert sorted(files.values()).count(json.dumps(STOP).encode()) == 1


def test_the_daemon_records_a_dropped_payload_as_the_hook_would(daemon: Spawned) -> None:
    paths = daemon.paths
    assert drop(TOOL).returncode == 0
    assert drop(STOP).returncode == 0
    with daemon.client() as client:
        dropped = wait_for_events(client, "inbox-s", 2)
    assert [(e["kind"], e["agent"], e["payload"]) for e in dropped] == [
        ("hook.post_tool_use", "main", TOOL),
        ("hook.stop", "main", STOP),
    ]
    assert dropped[0]["key"] == "hook.post_tool_use:toolu_01"
    key = dropped[1]["key"]
    assert key.startswith("hook.stop:") and len(key.split(":", 1)[1]) == 32
    wait_for(lambda: not inbox_files(paths), "the inbox emptied")
    # The same tool payload through `toka hook` lands on the same key: one event, not two.
    assert run_hook(json.dumps(TOOL)).returncode == 0
    with daemon.client() as client:
        assert [e["key"] for e in events_of(client, "inbox-s")] == [dropped[0]["key"], key]


def test_the_same_payload_dropped_twice_is_two_events_in_the_order_written(daemon: Spawned) -> None:
    for _ in range(2):
        assert drop(STOP).returncode == 0
    assert drop({**STOP, "hook_event_name": "SessionEnd", "reason": "other"}).returncode == 0
    with daemon.client() as client:
        found = wait_for_events(client, "inbox-s", 3)
    assert [e["kind"] for e in found] == ["hook.stop", "hook.stop", "hook.session_end"]
    assert len({e["key"] for e in found}) == 3


def test_payloads_dropped_while_the_daemon_is_down_land_before_its_socket_answers() -> None:
    paths = resolve_paths()
    for n in range(3):
        assert drop({**TOOL, "tool_use_id": f"toolu_{n}"}).returncode == 0
    assert len(inbox_files(paths)) == 3  # they wait
    process = start_daemon(paths)
    try:
        with Client(paths, autostart=False) as client:  # no wait: ingested at start-up
            found = events_of(client, "inbox-s")
        assert [e["key"] for e in found] == [f"hook.post_tool_use:toolu_{n}" for n in range(3)]
        assert inbox_files(paths) == []
    finally:
        stop_daemon(process)


def test_a_file_ingested_again_after_a_crash_lands_once(tmp_path: Path) -> None:
    paths = resolve_paths()
    assert drop(STOP).returncode == 0
    (name,) = inbox_files(paths)
    os.link(paths.inbox / name, tmp_path / "kept")  # the same file: its name, inode and time
    process = start_daemon(paths)
    try:
        with Client(paths, autostart=False) as client:
            (first,) = events_of(client, "inbox-s")
            os.link(tmp_path / "kept", paths.inbox / name)  # as if the daemon died before deleting it
            wait_for(lambda: not inbox_files(paths), "the inbox drained again")
            assert [e["key"] for e in events_of(client, "inbox-s")] == [first["key"]]
    finally:
        stop_daemon(process)


def test_what_is_no_event_is_set_aside_and_the_rest_lands(daemon: Spawned) -> None:
    paths = daemon.paths
    old = time.time() - STALE_S - 5
    paths.inbox.mkdir(mode=0o700, exist_ok=True)
    cut = paths.inbox / "claude-code.cut"  # a hook killed halfway, a while ago
    cut.write_bytes(json.dumps(STOP).encode()[:20])
    os.utime(cut, (old, old))
    (paths.inbox / "claude-code.list").write_bytes(b"[1, 2]")
    (paths.inbox / "claude-code.nosession").write_bytes(b'{"hook_event_name": "Stop"}')
    (paths.inbox / "claude-code.nan").write_bytes(b'{"session_id": "inbox-s", "x": NaN}')
    (paths.inbox / "notes.txt").write_bytes(json.dumps(STOP).encode())
    os.symlink("/etc/hostname", paths.inbox / "claude-code.link")
    assert drop(TOOL).returncode == 0
    with daemon.client() as client:
        assert [e["kind"] for e in wait_for_events(client, "inbox-s", 1)] == ["hook.post_tool_use"]
    wait_for(lambda: not inbox_files(paths), "the inbox emptied")
    aside = rejected_files(paths)
    assert sorted(name.rsplit(".", 1)[0] for name in aside) == sorted(
        [
            "claude-code.cut",
            "claude-code.list",
            "claude-code.nosession",
            "claude-code.nan",
            "notes.txt",
            "claude-code.link",
        ]
    )
    assert (
        paths.inbox_rejected / next(n for n in aside if n.startswith("claude-code.cut"))
    ).read_bytes() == json.dumps(STOP).encode()[:20]
    assert daemon.process.poll() is None
    log = daemon.log()
    assert "claude-code.list is no hook event (the payload is a JSON list, not an object)" in log
    assert "claude-code.cut is no hook event (not a whole payload" in log


def test_a_payload_still_being_written_is_left_until_it_is_whole(daemon: Spawned) -> None:
    paths = daemon.paths
    paths.inbox.mkdir(mode=0o700, exist_ok=True)
    raw = json.dumps(STOP).encode()
    part = paths.inbox / "claude-code.1"
    with open(part, "wb") as writing:
        writing.write(raw[:10])
        writing.flush()
        assert drop(TOOL).returncode == 0  # a drain takes this one and must leave the other
        with daemon.client() as client:
            assert [e["kind"] for e in wait_for_events(client, "inbox-s", 1)] == ["hook.post_tool_use"]
        assert inbox_files(paths) == ["claude-code.1"] and rejected_files(paths) == []
        writing.write(raw[10:])
    with daemon.client() as client:
        found = wait_for_events(client, "inbox-s", 2)
    assert [e["payload"] for e in found] == [TOOL, STOP]
    assert rejected_files(paths) == []


def test_a_codex_payload_becomes_the_event_toka_hook_codex_records(daemon: Spawned) -> None:
    codex = {
        "session_id": "inbox-codex",
        "turn_id": "t1",
        "hook_event_name": "PreToolUse",
        "tool_name": "shell",
        "tool_use_id": "call_9",
        "tool_input": {"command": ["ls"]},
        "cwd": "/p",
        "transcript_path": None,
        "model": "gpt-5",
    }
    assert drop(codex, "codex").returncode == 0
    with daemon.client() as client:
        (dropped,) = wait_for_events(client, "inbox-codex", 1)
    assert (dropped["kind"], dropped["agent"], dropped["key"]) == (
        "hook.pre_tool_use",
        "main",
        "hook.pre_tool_use:call_9",
    )
    assert dropped["payload"] == codex
    hooked = subprocess.run(
        [str(TOKA), "hook", "codex"], input=json.dumps(codex).encode(), capture_output=True, timeout=30
    )
    assert hooked.returncode == 0
    with daemon.client() as client:
        assert [e["key"] for e in events_of(client, "inbox-codex")] == ["hook.pre_tool_use:call_9"]


def test_more_files_than_a_batch_land_each_once_in_the_order_written() -> None:
    paths = resolve_paths()
    paths.inbox.mkdir(mode=0o700, parents=True)
    count = 1_200  # more than one batch (daemon/batching.py: 1,000 events)
    start = time.time_ns() - count * 1_000_000
    for n in range(count):
        path = paths.inbox / f"claude-code.{n}"
        path.write_text(json.dumps({**TOOL, "tool_use_id": f"toolu_{n}"}))
        written = start + n * 1_000_000  # a millisecond apart, the names out of that order
        os.utime(path, ns=(written, written))
    process = start_daemon(paths)
    try:
        with Client(paths, autostart=False) as client:
            keys = [e["key"] for e in events_of(client, "inbox-s")]
        assert keys == [f"hook.post_tool_use:toolu_{n}" for n in range(count)]
        assert inbox_files(paths) == [] and rejected_files(paths) == []
    finally:
        stop_daemon(process)
