"""`toka integrate claude-code`: the hooks that answer run `toka hook`, the others drop their payload
into the daemon's inbox with a shell command, and the entries of before (synchronous everywhere,
in the background form, or ``async``) are converted in place."""

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
from toka_cli.integrate.inbox import inbox_command

TOKA = str((Path(sys.executable).parent / "toka").absolute())
PLAIN = f"{TOKA} hook claude-code"
BACKGROUND = f"exec 3<&0; {{ {TOKA} hook claude-code <&3 >/dev/null 2>&1 & }}"
RECORDING = [event for event in EVENTS if event not in ANSWERING]


def _inbox() -> str:
    """The inbox command as installed with this test's HOME (the platform's data dir is under it)."""
    return inbox_command("claude-code")


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


def _background_install() -> dict[str, Any]:
    """What toka installed before the inbox: the recording events' hook in the background form."""
    hooks: dict[str, Any] = {}
    for event in EVENTS:
        group: dict[str, Any] = {"matcher": "*"} if event in ("PreToolUse", "PostToolUse") else {}
        command = PLAIN if event in ANSWERING else BACKGROUND
        hooks[event] = [{**group, "hooks": [{"type": "command", "command": command}]}]
    return {"hooks": hooks}


def test_the_answering_events_run_the_hook_and_the_others_drop_into_the_inbox(home: Path) -> None:
    report = json.loads(integrate_claude("--json").stdout)
    assert ANSWERING == ("SessionStart", "UserPromptSubmit", "PreCompact")
    assert "PostCompact" in EVENTS and report["events"] == list(EVENTS)
    expected = {event: PLAIN if event in ANSWERING else _inbox() for event in EVENTS}
    assert report["commands"] == expected and report["command"] == PLAIN
    handlers = _handlers(claude_settings(home))
    assert handlers == {event: [{"type": "command", "command": expected[event]}] for event in EVENTS}
    assert all(is_toka_hook(h) for hs in handlers.values() for h in hs)


def test_the_inbox_command_names_the_platform_data_dir_when_toka_home_is_unset(home: Path) -> None:
    from daemon.paths import platform_dirs

    data = platform_dirs()[0]
    assert data.startswith(str(home))
    assert _inbox().startswith(f"d=${{TOKA_HOME:-{data}}}/hooks.inbox; ")
    assert inbox_command("claude-code", "/a dir/it's").startswith("d=${TOKA_HOME:-'/a dir/it'\"'\"'s'}/hooks.inbox; ")


def test_the_events_waited_for_are_those_whose_hook_answers() -> None:
    assert {event_kind(event) for event in ANSWERING} == set(ANSWERED)


def test_the_table_output_names_each_events_command(home: Path) -> None:
    result = integrate_claude()
    assert result.exit_code == 0, result.output
    assert f"add SessionStart: {PLAIN}\n" in result.stdout
    assert "add PostToolUse: the payload into toka's inbox (a shell command: cat, no Python; docs/hooks.md)\n" in (
        result.stdout
    )


def test_the_synchronous_entries_of_before_are_converted_in_place(home: Path) -> None:
    _write(home, _previous_install())
    report = json.loads(integrate_claude("--json").stdout)
    assert report["events"] == ["PostCompact"]  # new since
    assert report["updated"] == [e for e in RECORDING if e != "PostCompact"]
    handlers = _handlers(claude_settings(home))
    assert handlers["Stop"] == [{"type": "command", "command": _inbox()}]
    assert handlers["SessionStart"] == [{"type": "command", "command": PLAIN}]
    assert [len(hs) for hs in handlers.values()] == [1] * len(EVENTS)  # converted, not added beside
    again = json.loads(integrate_claude("--json").stdout)
    assert again["changed"] is False and again["events"] == [] and again["updated"] == []


def test_the_background_entries_of_before_are_converted_in_place(home: Path) -> None:
    assert background(PLAIN) == BACKGROUND
    _write(home, _background_install())
    report = json.loads(integrate_claude("--json").stdout)
    assert report["events"] == [] and report["updated"] == RECORDING
    handlers = _handlers(claude_settings(home))
    assert handlers == {
        event: [{"type": "command", "command": PLAIN if event in ANSWERING else _inbox()}] for event in EVENTS
    }


def test_an_async_entry_is_made_an_inbox_one_keeping_its_other_keys(home: Path) -> None:
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
    assert handlers["PostToolUse"] == [{"type": "command", "command": _inbox(), "timeout": 30}]
    # An answering event's hook must be waited for: "async" goes, its option stays.
    assert handlers["UserPromptSubmit"] == [{"type": "command", "command": f"{PLAIN} --headroom"}]
    assert handlers["Stop"] == [{"type": "command", "command": _inbox()}]


def test_no_inbox_runs_the_hook_on_every_event_and_inbox_converts_back(home: Path) -> None:
    report = json.loads(integrate_claude("--no-inbox", "--json").stdout)
    assert report["commands"] == dict.fromkeys(EVENTS, PLAIN)
    assert _handlers(claude_settings(home)) == {event: [{"type": "command", "command": PLAIN}] for event in EVENTS}
    assert json.loads(integrate_claude("--no-inbox", "--json").stdout)["changed"] is False
    back = json.loads(integrate_claude("--json").stdout)
    assert back["updated"] == RECORDING and back["events"] == []
    assert _handlers(claude_settings(home))["Stop"] == [{"type": "command", "command": _inbox()}]
    again = json.loads(integrate_claude("--no-inbox", "--json").stdout)
    assert again["updated"] == RECORDING
    assert _handlers(claude_settings(home))["Stop"] == [{"type": "command", "command": PLAIN}]


def test_no_background_of_older_scripts_is_accepted_and_changes_nothing(home: Path) -> None:
    first = json.loads(integrate_claude("--json").stdout)
    report = json.loads(integrate_claude("--no-background", "--json").stdout)
    assert report["changed"] is False and report["commands"] == first["commands"]


def test_an_inbox_entry_from_another_data_dir_is_updated_in_place(home: Path) -> None:
    elsewhere = inbox_command("claude-code", "/old/data dir")
    _write(home, {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": elsewhere}]}]}})
    report = json.loads(integrate_claude("--json").stdout)
    assert "Stop" in report["updated"] and "Stop" not in report["events"]
    assert _handlers(claude_settings(home))["Stop"] == [{"type": "command", "command": _inbox()}]


def test_uninstall_removes_the_inbox_entries_and_keeps_the_users_own(home: Path) -> None:
    theirs = {"type": "command", "command": "exec 3<&0; { my-logger <&3 >/dev/null 2>&1 & }"}
    _write(home, {"hooks": {"Stop": [{"hooks": [theirs]}]}})
    assert integrate_claude().exit_code == 0
    assert _handlers(claude_settings(home))["Stop"] == [theirs, {"type": "command", "command": _inbox()}]
    report = json.loads(integrate_claude("--uninstall", "--json").stdout)
    assert sorted(report["events"]) == sorted(EVENTS) and report["commands"] == {}
    assert claude_settings(home) == {"hooks": {"Stop": [{"hooks": [theirs]}]}}


def test_a_dry_run_shows_the_conversion_and_writes_nothing(home: Path) -> None:
    _write(home, _previous_install())
    before = (home / ".claude" / "settings.json").read_text()
    report = json.loads(integrate_claude("--dry-run", "--json").stdout)
    assert report["changed"] and report["dry_run"] and "Stop" in report["updated"]
    assert json.dumps(_inbox())[1:-1] in report["diff"]
    assert (home / ".claude" / "settings.json").read_text() == before


def _recorded(daemon: Spawned, session: str) -> list[dict[str, Any]]:
    try:
        with daemon.client() as client:
            found: dict[str, Any] = client.call("events.query", session=session)
    except NotFound:
        return []
    return list(found["events"])


# The background form toka installed before: what it did until it is converted.
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
