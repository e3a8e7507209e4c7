"""`toka integrate claude-code`: the hooks that answer run synchronously, the others in the
background, and the entries of before (synchronous everywhere, or ``async``) are converted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from daemons import Spawned, wait_for
from hook_support import claude_settings, integrate_claude

from store.errors import NotFound
from toka_cli.hook import ANSWERED, event_kind
from toka_cli.integrate.claude_hooks import ANSWERING, EVENTS, background, is_toka_hook

TOKA = str((Path(sys.executable).parent / "toka").absolute())
PLAIN = f"{TOKA} hook claude-code"
BACKGROUND = f"exec 3<&0; {{ {TOKA} hook claude-code <&3 >/dev/null 2>&1 & }}"
RECORDING = [event for event in EVENTS if event not in ANSWERING]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def _write(home: Path, settings: dict[str, Any]) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(settings))


def _handlers(settings: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {event: [h for g in groups for h in g["hooks"]] for event, groups in settings["hooks"].items()}


def _previous_install() -> dict[str, Any]:
    """What toka installed before: every event, this toka synchronously, PostCompact not yet."""
    hooks: dict[str, Any] = {}
    for event in EVENTS:
        if event == "PostCompact":
            continue
        group: dict[str, Any] = {"matcher": "*"} if event in ("PreToolUse", "PostToolUse") else {}
        hooks[event] = [{**group, "hooks": [{"type": "command", "command": PLAIN}]}]
    return {"hooks": hooks}


def test_the_answering_events_run_the_hook_and_the_others_run_it_in_the_background(home: Path) -> None:
    report = json.loads(integrate_claude("--json").stdout)
    assert ANSWERING == ("SessionStart", "UserPromptSubmit", "PreCompact")
    assert "PostCompact" in EVENTS and report["events"] == list(EVENTS)
    assert background(PLAIN) == BACKGROUND
    expected = {event: PLAIN if event in ANSWERING else BACKGROUND for event in EVENTS}
    assert report["commands"] == expected and report["command"] == PLAIN
    handlers = _handlers(claude_settings(home))
    assert handlers == {event: [{"type": "command", "command": expected[event]}] for event in EVENTS}
    assert all(is_toka_hook(h) for hs in handlers.values() for h in hs)


def test_the_events_waited_for_are_those_whose_hook_answers() -> None:
    assert {event_kind(event) for event in ANSWERING} == set(ANSWERED)


def test_the_table_output_names_each_events_command(home: Path) -> None:
    result = integrate_claude()
    assert result.exit_code == 0, result.output
    assert f"add SessionStart: {PLAIN}\n" in result.stdout
    assert f"add PostToolUse: {BACKGROUND}\n" in result.stdout


def test_the_synchronous_entries_of_before_are_converted_in_place(home: Path) -> None:
    _write(home, _previous_install())
    report = json.loads(integrate_claude("--json").stdout)
    assert report["events"] == ["PostCompact"]  # new since
    assert report["updated"] == [e for e in RECORDING if e != "PostCompact"]
    handlers = _handlers(claude_settings(home))
    assert handlers["Stop"] == [{"type": "command", "command": BACKGROUND}]
    assert handlers["SessionStart"] == [{"type": "command", "command": PLAIN}]
    assert [len(hs) for hs in handlers.values()] == [1] * len(EVENTS)  # converted, not added beside
    again = json.loads(integrate_claude("--json").stdout)
    assert again["changed"] is False and again["events"] == [] and again["updated"] == []


def test_an_async_entry_is_made_a_background_one_keeping_its_other_keys(home: Path) -> None:
    _write(
        home,
        {
            "hooks": {
                "PostToolUse": [
                    {"matcher": "*", "hooks": [{"type": "command", "command": PLAIN, "async": True, "timeout": 30}]}
                ],
                "UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"{PLAIN} --headroom", "async": True}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "toka hook claude-code --headroom 2>/dev/null"}]}],
            }
        },
    )
    report = json.loads(integrate_claude("--json").stdout)
    assert report["updated"] == ["UserPromptSubmit", "PostToolUse", "Stop"]
    handlers = _handlers(claude_settings(home))
    assert handlers["PostToolUse"] == [{"type": "command", "command": BACKGROUND, "timeout": 30}]
    # An answering event's hook must be waited for: "async" goes, its option stays.
    assert handlers["UserPromptSubmit"] == [{"type": "command", "command": f"{PLAIN} --headroom"}]
    with_option = f"exec 3<&0; {{ {TOKA} hook claude-code --headroom <&3 >/dev/null 2>&1 & }}"
    assert handlers["Stop"] == [{"type": "command", "command": with_option}]


def test_no_background_makes_claude_code_wait_for_every_hook_and_background_converts_back(home: Path) -> None:
    report = json.loads(integrate_claude("--no-background", "--json").stdout)
    assert report["commands"] == dict.fromkeys(EVENTS, PLAIN)
    assert _handlers(claude_settings(home)) == {event: [{"type": "command", "command": PLAIN}] for event in EVENTS}
    assert json.loads(integrate_claude("--no-background", "--json").stdout)["changed"] is False
    back = json.loads(integrate_claude("--json").stdout)
    assert back["updated"] == RECORDING and back["events"] == []
    assert _handlers(claude_settings(home))["Stop"] == [{"type": "command", "command": BACKGROUND}]
    again = json.loads(integrate_claude("--no-background", "--json").stdout)
    assert again["updated"] == RECORDING
    assert _handlers(claude_settings(home))["Stop"] == [{"type": "command", "command": PLAIN}]


def test_uninstall_removes_the_background_entries_and_keeps_the_users_own(home: Path) -> None:
    theirs = {"type": "command", "command": "exec 3<&0; { my-logger <&3 >/dev/null 2>&1 & }"}
    _write(home, {"hooks": {"Stop": [{"hooks": [theirs]}]}})
    assert integrate_claude().exit_code == 0
    assert _handlers(claude_settings(home))["Stop"] == [theirs, {"type": "command", "command": BACKGROUND}]
    report = json.loads(integrate_claude("--uninstall", "--json").stdout)
    assert sorted(report["events"]) == sorted(EVENTS) and report["commands"] == {}
    assert claude_settings(home) == {"hooks": {"Stop": [{"hooks": [theirs]}]}}


def test_a_dry_run_shows_the_conversion_and_writes_nothing(home: Path) -> None:
    _write(home, _previous_install())
    before = (home / ".claude" / "settings.json").read_text()
    report = json.loads(integrate_claude("--dry-run", "--json").stdout)
    assert report["changed"] and report["dry_run"] and "Stop" in report["updated"]
    assert json.dumps(BACKGROUND)[1:-1] in report["diff"]
    assert (home / ".claude" / "settings.json").read_text() == before


def _recorded(daemon: Spawned, session: str) -> list[dict[str, Any]]:
    try:
        with daemon.client() as client:
            found: dict[str, Any] = client.call("events.query", session=session)
    except NotFound:
        return []
    return list(found["events"])


def test_the_background_command_records_the_payload_after_the_shell_exits(daemon: Spawned) -> None:
    """Run as Claude Code runs a hook (``sh -c COMMAND``, the payload on stdin, output read until
    it ends): the shell is done before the hook is, and the event lands all the same."""
    payload = {
        "session_id": "bg-1",
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_use_id": "toolu_bg1",
        "tool_response": {"content": "x" * 200_000},  # more than a pipe holds
    }
    done = subprocess.run(
        ["/bin/sh", "-c", BACKGROUND],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env={**os.environ},
        timeout=30,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    [event] = wait_for(lambda: _recorded(daemon, "bg-1"), "the background hook's event")
    assert (event["kind"], event["key"]) == ("hook.post_tool_use", "hook.post_tool_use:toolu_bg1")
    assert event["payload"] == payload


def test_the_background_command_spools_while_the_daemon_is_down(toka_home: Path) -> None:
    from daemon.paths import resolve_paths

    spool = resolve_paths().spool
    payload = {"session_id": "bg-2", "hook_event_name": "Stop", "stop_hook_active": False}
    done = subprocess.run(
        ["/bin/sh", "-c", BACKGROUND], input=json.dumps(payload).encode(), capture_output=True, timeout=30
    )
    assert done.returncode == 0
    text = wait_for(lambda: spool.exists() and spool.read_text().endswith("\n") and spool.read_text(), "a spooled line")
    [event] = [json.loads(line) for line in text.splitlines()]
    assert (event["session"], event["kind"], event["payload"]) == ("bg-2", "hook.stop", payload)
