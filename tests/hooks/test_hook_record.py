"""`toka hook claude-code` with the daemon running: every fixture payload lands once in its session."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
from collections import Counter

import pytest
from hook_support import TOKA, fixture_files, payloads, run_hook

from daemon.client.sync import Client
from daemon.paths import resolve_paths
from toka_cli.hook import event_kind, record_hook


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("SessionStart", "hook.session_start"),
        ("UserPromptSubmit", "hook.user_prompt_submit"),
        ("PreToolUse", "hook.pre_tool_use"),
        ("PostToolUse", "hook.post_tool_use"),
        ("Notification", "hook.notification"),
        ("Stop", "hook.stop"),
        ("SubagentStop", "hook.subagent_stop"),
        ("PreCompact", "hook.pre_compact"),
        ("SessionEnd", "hook.session_end"),
        ("PostToolUseFailure", "hook.post_tool_use_failure"),
        ("WorktreeCreate/Remove", "hook.worktree_create_remove"),
        ("", "hook.unknown"),
        (None, "hook.unknown"),
    ],
)
def test_event_kind_is_the_snake_case_event_name(name: object, kind: str) -> None:
    assert event_kind(name) == kind


def test_one_payload_of_every_fixture_through_the_real_command(daemon: object) -> None:
    for path in fixture_files():
        payload = payloads(path)[0]
        raw = json.dumps(payload).encode()
        result = run_hook(raw)
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b""), path.name
        with Client(autostart=False) as client:
            events = list(client.iter_events(session=payload["session_id"]))
        key = "hook:" + hashlib.sha256(raw).hexdigest()
        [event] = [e for e in events if e["key"] == key]
        assert event["kind"] == event_kind(payload["hook_event_name"]), path.name
        assert event["agent"] == "main"
        assert event["payload"] == payload
    assert not resolve_paths().spool.exists()


@pytest.mark.slow
def test_every_fixture_payload_lands_once_even_when_replayed(daemon: object) -> None:
    expected: Counter[str] = Counter()
    seen: set[tuple[str, bytes]] = set()
    for path in fixture_files():
        for payload in payloads(path):
            raw = json.dumps(payload).encode()
            for _ in range(2):  # a retried hook is recorded once
                out, err = io.StringIO(), io.StringIO()
                assert record_hook("claude-code", raw, out, err) == 0
                assert (out.getvalue(), err.getvalue()) == ("", "")
            if (payload["session_id"], raw) not in seen:
                seen.add((payload["session_id"], raw))
                expected[payload["session_id"]] += 1
    with Client(autostart=False) as client:
        counts = Counter(e["session"] for e in client.iter_events())
        sessions = {s["session"]: s for s in client.call("sessions.list")["sessions"]}
    assert counts == expected
    assert set(sessions) == set(expected)
    # Byte-identical payloads (Claude Code repeats idle notifications word for word) are one event.
    assert sum(expected.values()) <= sum(len(payloads(p)) for p in fixture_files())


def test_session_start_keeps_the_model_with_its_window_suffix(daemon: object) -> None:
    payload = next(p for f in fixture_files() for p in payloads(f) if p.get("model", "").endswith("[1m]"))
    assert run_hook(json.dumps(payload)).returncode == 0
    with Client(autostart=False) as client:
        [event] = client.iter_events(session=payload["session_id"], kinds=["hook.session_start"])
    assert event["payload"]["model"] == payload["model"]


def test_an_unknown_event_is_recorded_under_its_own_name(daemon: object) -> None:
    payload = {"session_id": "s-new", "hook_event_name": "PostToolBatch", "tools": 3}
    result = run_hook(json.dumps(payload))
    assert (result.returncode, result.stdout) == (0, b"")
    with Client(autostart=False) as client:
        [event] = client.iter_events(session="s-new")
    assert (event["kind"], event["payload"]) == ("hook.post_tool_batch", payload)


@pytest.mark.parametrize(
    "stdin",
    [b"", b"   \n", b"not json", b"[1, 2]", b'{"hook_event_name": "Stop"}', b'{"session_id": 7}', b"\xff\xfe"],
    ids=["empty", "blank", "not-json", "array", "no-session", "bad-session", "not-utf8"],
)
def test_bad_stdin_exits_0_with_a_note_and_records_nothing(daemon: object, stdin: bytes) -> None:
    result = run_hook(stdin)
    assert (result.returncode, result.stdout) == (0, b"")
    note = result.stderr.decode()
    assert note.startswith("toka hook: nothing recorded:") and note.count("\n") == 1
    with Client(autostart=False) as client:
        assert client.call("stats")["events"] == 0
    assert not resolve_paths().spool.exists()


def test_an_unknown_agent_is_a_non_blocking_error() -> None:
    result = subprocess.run([str(TOKA), "hook", "cursor"], input=b"{}", capture_output=True, timeout=30)
    assert result.returncode == 1  # not 2: Claude Code would block the tool call on exit 2
    assert result.stdout == b"" and b"unknown agent" in result.stderr
