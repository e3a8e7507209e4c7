"""`toka integrate claude-code`: toka's hooks into settings.json, everything else kept."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hook_support import claude_settings, integrate_claude
from typer.testing import CliRunner

from toka_cli.integrate.claude_hooks import EVENTS, is_toka_hook
from toka_cli.integrate.inbox import inbox_command
from toka_cli.main import app

TOKA = str((Path(sys.executable).parent / "toka").absolute())

OTHER = {
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh", "timeout": 5}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def _toka_events(settings: dict[str, Any]) -> list[str]:
    return [
        event
        for event, groups in settings.get("hooks", {}).items()
        for group in groups
        for handler in group["hooks"]
        if is_toka_hook(handler)
    ]


def _backups(home: Path) -> list[Path]:
    return sorted((home / ".claude").glob("settings.json.bak-*"))


def test_a_fresh_file_gets_every_event(home: Path) -> None:
    result = integrate_claude("--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) == {
        "agent",
        "settings",
        "action",
        "command",
        "commands",
        "events",
        "updated",
        "statusline",
        "mcp",
        "changed",
        "dry_run",
        "backup",
        "diff",
        "otel",
    }
    assert report["statusline"]["state"] == "absent"  # offered, not installed unasked
    assert "statusLine" not in claude_settings(home)
    assert report["action"] == "install" and report["dry_run"] is False
    assert report["events"] == list(EVENTS) and report["changed"] and report["backup"] is None
    settings = claude_settings(home)
    assert _toka_events(settings) == list(EVENTS)
    assert settings["hooks"]["PreToolUse"][0]["matcher"] == "*"
    assert "matcher" not in settings["hooks"]["Stop"][0]
    # By its absolute path: Claude Code runs hooks without the venv on its PATH. An event that
    # only records drops its payload into the inbox (test_integrate_claude_inbox.py).
    assert settings["hooks"]["SessionStart"][0]["hooks"][0]["command"] == f"{TOKA} hook claude-code"
    assert settings["hooks"]["Stop"][0]["hooks"][0]["command"] == inbox_command("claude-code")
    assert report["command"] == f"{TOKA} hook claude-code" and report["updated"] == []


def test_other_settings_and_hooks_are_kept_and_a_backup_made(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(OTHER))
    result = integrate_claude()
    assert result.exit_code == 0, result.output
    assert "add PreToolUse:" in result.stdout and "backup:" in result.stdout
    settings = claude_settings(home)
    assert settings["model"] == "opus" and settings["permissions"] == OTHER["permissions"]
    assert settings["hooks"]["PreToolUse"][0] == OTHER["hooks"]["PreToolUse"][0]
    assert settings["hooks"]["Stop"][0] == OTHER["hooks"]["Stop"][0]
    assert _toka_events(settings) == ["PreToolUse", "Stop"] + [e for e in EVENTS if e not in ("PreToolUse", "Stop")]
    [backup] = _backups(home)
    assert json.loads(backup.read_text()) == OTHER


def test_running_twice_adds_nothing(home: Path) -> None:
    assert integrate_claude().exit_code == 0
    before = (home / ".claude" / "settings.json").read_text()
    result = integrate_claude("--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["changed"] is False
    assert (home / ".claude" / "settings.json").read_text() == before
    assert _backups(home) == []  # nothing changed, nothing backed up


def test_uninstall_removes_only_tokas_entries(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(OTHER))
    assert integrate_claude().exit_code == 0
    result = integrate_claude("--uninstall", "--json")
    assert result.exit_code == 0
    assert sorted(json.loads(result.stdout)["events"]) == sorted(EVENTS)
    assert claude_settings(home) == OTHER
    again = integrate_claude("--uninstall")
    assert again.exit_code == 0 and "nothing to remove" in again.stdout


def test_uninstall_of_a_file_with_only_toka_leaves_no_empty_hooks(home: Path) -> None:
    assert integrate_claude().exit_code == 0
    assert integrate_claude("--uninstall").exit_code == 0
    assert claude_settings(home) == {}


def test_dry_run_writes_nothing(home: Path) -> None:
    result = integrate_claude("--dry-run")
    assert result.exit_code == 0
    assert "would add SessionStart:" in result.stdout and "nothing written" in result.stdout
    assert not (home / ".claude").exists()
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(OTHER))
    assert json.loads(integrate_claude("--dry-run", "--json").stdout)["dry_run"] is True
    assert json.loads(path.read_text()) == OTHER and _backups(home) == []


def test_project_settings(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    result = integrate_claude("--project", str(project), "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["settings"] == str(project / ".claude" / "settings.json")
    assert _toka_events(json.loads((project / ".claude" / "settings.json").read_text())) == list(EVENTS)
    assert not (home / ".claude").exists()


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"hooks": []}'], ids=["invalid", "array", "bad-hooks"])
def test_invalid_settings_are_refused_and_left_alone(home: Path, text: str) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(text)
    result = integrate_claude()
    assert result.exit_code == 2
    assert result.stdout == "" and result.stderr.startswith("error: ")
    assert path.read_text() == text and _backups(home) == []


def test_an_unknown_agent_is_a_usage_error(home: Path) -> None:
    result = CliRunner().invoke(app, ["integrate", "cursor"])
    assert result.exit_code == 2


def test_the_status_line_is_added_when_asked_and_removed_with_the_hooks(home: Path) -> None:
    offered = integrate_claude()
    assert "rerun with --statusline" in offered.stdout
    result = integrate_claude("--statusline", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["statusline"]["state"] == "added" and report["changed"] and report["events"] == []
    line = claude_settings(home)["statusLine"]
    assert line["type"] == "command" and line["command"].endswith("statusline")
    again = json.loads(integrate_claude("--statusline", "--json").stdout)
    assert (again["statusline"]["state"], again["changed"]) == ("installed", False)
    removed = json.loads(integrate_claude("--uninstall", "--json").stdout)
    assert removed["statusline"]["state"] == "removed"
    assert "statusLine" not in claude_settings(home)


def test_another_status_line_is_left_as_it_is(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"statusLine": {"type": "command", "command": "~/bin/my-line.sh"}}))
    report = json.loads(integrate_claude("--statusline", "--json").stdout)
    assert report["statusline"]["state"] == "other"
    assert claude_settings(home)["statusLine"]["command"] == "~/bin/my-line.sh"
    assert json.loads(integrate_claude("--uninstall", "--json").stdout)["statusline"]["state"] == "other"
    assert claude_settings(home)["statusLine"]["command"] == "~/bin/my-line.sh"


def test_a_bare_toka_from_an_older_install_is_updated_to_the_absolute_path(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    bare = {"type": "command", "command": "toka hook claude-code"}
    old = {
        "hooks": {"Stop": [{"hooks": [bare]}], "PreToolUse": [{"matcher": "*", "hooks": [dict(bare)]}]},
        "statusLine": {"type": "command", "command": "toka statusline", "padding": 0},
    }
    path.write_text(json.dumps(old))
    result = integrate_claude("--json")
    report = json.loads(result.stdout)
    assert report["updated"] == ["PreToolUse", "Stop"]
    assert report["statusline"]["state"] == "updated"
    settings = claude_settings(home)
    assert settings["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": inbox_command("claude-code")}]}]
    assert settings["statusLine"] == {"type": "command", "command": f"{TOKA} statusline", "padding": 0}
    assert _toka_events(settings).count("Stop") == 1  # updated in place, not added twice
    again = json.loads(integrate_claude("--json").stdout)
    assert again["changed"] is False and again["updated"] == [] and again["statusline"]["state"] == "installed"


def test_the_older_status_line_spelling_is_recognised_and_updated(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"statusLine": {"type": "command", "command": f"{TOKA} hook claude-code --statusline"}}))
    report = json.loads(integrate_claude("--statusline", "--json").stdout)
    assert report["statusline"] == {"command": f"{TOKA} statusline", "state": "updated"}
    assert claude_settings(home)["statusLine"] == {"type": "command", "command": f"{TOKA} statusline"}
    path.write_text(json.dumps({"statusLine": {"type": "command", "command": f"{TOKA} hook claude-code --statusline"}}))
    assert json.loads(integrate_claude("--uninstall", "--json").stdout)["statusline"]["state"] == "removed"
    assert "statusLine" not in claude_settings(home)
