"""`toka hook claude-code` with the daemon running: every fixture payload lands in its session
(how often: tests/hooks/test_hook_keys.py)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from hook_support import TOKA, fixture_files, payloads, run_hook

from daemon.client.sync import Client
from daemon.paths import resolve_paths
from toka_cli.hook import event_kind


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
        kind = event_kind(payload["hook_event_name"])
        [event] = [e for e in events if e["kind"] == kind and e["payload"] == payload]
        assert event["agent"] == "main"
        occurrence = payload.get("tool_use_id") or r"[0-9a-f]{32}"  # the tool use, else the invocation
        assert re.fullmatch(f"{re.escape(kind)}:{occurrence}", event["key"]), (path.name, event["key"])
    assert not resolve_paths().spool.exists()


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
