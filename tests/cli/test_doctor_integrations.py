"""`toka doctor` on what `toka integrate` installed: files that parse, commands that run as the
agent runs them (not through this shell's PATH), and a `toka mcp` that answers `initialize`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import invoke
from test_doctor import checks_of, run_doctor

from toka_cli import doctor_integrations

TOKA = Path(sys.executable).parent / "toka"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    return home


def check(name: str) -> dict[str, Any]:
    return checks_of(run_doctor("--json"))[name]


def without_venv_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    kept = [d for d in os.environ["PATH"].split(os.pathsep) if not (Path(d) / "toka").exists()]
    monkeypatch.setenv("PATH", os.pathsep.join(kept))


def write_settings(home: Path, command: str) -> Path:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    groups = {event: [{"hooks": [{"type": "command", "command": command}]}] for event in ("SessionStart", "Stop")}
    path.write_text(json.dumps({"hooks": groups}))
    return path


def test_integrate_then_doctor_is_ok_and_the_server_answers(home: Path) -> None:
    assert invoke("integrate", "claude-code").exit_code == 0
    assert invoke("integrate", "codex").exit_code == 0
    hooks, mcp, notify = check("hooks"), check("mcp"), check("codex_notify")
    assert hooks["status"] == "ok", hooks
    assert mcp["status"] == "ok" and mcp["detail"].startswith("toka's MCP server answers"), mcp
    assert str(home / ".claude.json") in mcp["detail"] and str(home / ".codex" / "config.toml") in mcp["detail"]
    assert notify == {
        "name": "codex_notify",
        "status": "ok",
        "detail": f"Codex runs `{TOKA} hook codex` after each turn",
        "fix": None,
    }


def test_a_bare_toka_not_on_the_agents_path_is_a_problem(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_settings(home, "toka hook claude-code")
    without_venv_on_path(monkeypatch)
    result = run_doctor("--json")
    assert result.exit_code == 1
    found = checks_of(result)["hooks"]
    assert found["status"] == "problem" and "`toka` is not on PATH" in found["detail"]
    assert found["fix"] == "toka integrate claude-code"


def test_a_bare_toka_found_only_through_this_path_is_a_warning(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_settings(home, "toka hook claude-code")
    monkeypatch.setenv("PATH", f"{TOKA.parent}{os.pathsep}{os.environ['PATH']}")
    found = check("hooks")
    assert found["status"] == "warning" and "only through PATH" in found["detail"]


def test_a_hook_path_that_is_gone_is_a_problem_and_integrate_fixes_it(home: Path) -> None:
    settings = write_settings(home, "/old/venv/bin/toka hook claude-code")
    found = check("hooks")
    assert found["status"] == "problem" and "/old/venv/bin/toka does not exist" in found["detail"]
    assert str(settings) in found["detail"]
    assert invoke("integrate", "claude-code").exit_code == 0
    assert check("hooks")["status"] == "ok"


def test_a_settings_file_that_is_not_json_is_a_problem(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text("{not json")
    found = check("hooks")
    assert found["status"] == "problem" and "is not valid JSON" in found["detail"]


def test_an_mcp_server_that_exits_is_a_problem_quoting_it(home: Path, tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "toka"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'error: toka mcp needs the mcp extra' >&2\nexit 2\n")
    fake.chmod(0o755)
    entry = {"type": "stdio", "command": str(fake), "args": ["mcp"]}
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"toka": entry}}))
    result = run_doctor("--json")
    assert result.exit_code == 1
    found = checks_of(result)["mcp"]
    assert found["status"] == "problem"
    assert "exited with 2: error: toka mcp needs the mcp extra" in found["detail"]
    assert found["fix"] == "toka integrate claude-code"


def test_an_mcp_server_that_never_answers_is_a_problem(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bin" / "toka"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nwhile read -r line; do :; done\n")  # reads its input, answers nothing
    fake.chmod(0o755)
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"toka": {"command": str(fake), "args": ["mcp"]}}}))
    monkeypatch.setattr(doctor_integrations, "INITIALIZE_TIMEOUT_S", 0.5)
    found = check("mcp")
    assert found["status"] == "problem" and "did not answer `initialize`" in found["detail"]
    assert found["fix"] == "toka integrate claude-code --project ."


def test_an_invalid_codex_config_is_a_problem_for_both_codex_checks(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text("model = \n")
    found = checks_of(run_doctor("--json"))
    assert found["mcp"]["status"] == "problem" and "is not valid TOML" in found["mcp"]["detail"]
    assert found["codex_notify"]["status"] == "problem"


def test_a_bare_toka_notify_is_reported(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text('notify = ["toka", "hook", "codex"]\n')
    without_venv_on_path(monkeypatch)
    found = check("codex_notify")
    assert found["status"] == "problem" and found["fix"] == "toka integrate codex"


def test_nothing_installed_is_fine(home: Path) -> None:
    found = checks_of(run_doctor("--json"))
    assert [found[name]["status"] for name in ("hooks", "mcp", "codex_notify")] == ["ok", "ok", "ok"]
    assert found["mcp"]["detail"] == "toka's MCP server not installed (optional)"


def test_an_mcp_server_that_closes_its_output_is_a_problem(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bin" / "toka"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexec cat >/dev/null\n")  # runs on, its stdout closed
    fake.chmod(0o755)
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"toka": {"command": str(fake), "args": ["mcp"]}}}))
    monkeypatch.setattr(doctor_integrations, "EXIT_TIMEOUT_S", 0.2)
    found = check("mcp")
    assert found["status"] == "problem" and "closed its output without answering `initialize`" in found["detail"]


def test_an_mcp_server_that_exits_with_a_hint_gives_it_as_the_fix(home: Path) -> None:
    """A real `toka mcp` whose SDK is missing says which package to install: that is the fix."""
    launcher = home / "without-sdk" / "toka"
    launcher.parent.mkdir()
    launcher.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "sys.modules['mcp'] = None  # as if the SDK had been removed after the install\n"
        "sys.argv = ['toka', 'mcp']\n"
        "from toka_cli.main import main\n"
        "main()\n"
    )
    launcher.chmod(0o755)
    entry = {"type": "stdio", "command": str(launcher), "args": ["mcp"]}
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"toka": entry}}))
    found = checks_of(run_doctor("--json"))["mcp"]
    assert found["status"] == "problem"
    assert "exited with 2: error: `toka mcp` needs the MCP SDK (the mcp package)" in found["detail"], found
    assert "hint" not in found["detail"]
    assert found["fix"] == "pip install 'mcp>=2.3,<3' (toka depends on it; reinstalling toka brings it back too)"


@pytest.mark.parametrize("spelling", ["statusline", "hook claude-code --statusline"])
def test_either_spelling_of_the_status_line_is_recognised(home: Path, spelling: str) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"statusLine": {"type": "command", "command": f"{TOKA} {spelling}"}}))
    found = check("hooks")
    assert found == {"name": "hooks", "status": "ok", "detail": f"Claude Code hooks installed in {path}", "fix": None}
    # Recognised, so judged as toka's: a path that is gone is reported, whichever the spelling.
    path.write_text(json.dumps({"statusLine": {"type": "command", "command": f"/gone/bin/toka {spelling}"}}))
    gone = check("hooks")
    assert gone["status"] == "problem" and f"`/gone/bin/toka {spelling}`" in gone["detail"]
    assert gone["fix"] == "toka integrate claude-code"


def test_async_hooks_of_toka_are_a_warning_that_integrate_fixes(home: Path) -> None:
    assert invoke("integrate", "claude-code", "--no-mcp").exit_code == 0
    path = home / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    settings["hooks"]["PostToolUse"][0]["hooks"][0]["async"] = True
    settings["hooks"]["Stop"][0]["hooks"][0]["async"] = True
    path.write_text(json.dumps(settings))
    found = check("hooks")
    assert found["status"] == "warning", found
    assert found["detail"] == (
        f"toka's hooks of PostToolUse, Stop in {path} are async: Claude Code kills them when a run ends,"
        " and their events are lost (docs/hooks.md)"
    )
    assert found["fix"] == "toka integrate claude-code"
    assert invoke("integrate", "claude-code", "--no-mcp").exit_code == 0
    assert check("hooks")["status"] == "ok"


def test_hooks_claude_code_waits_for_are_ok(home: Path) -> None:
    assert invoke("integrate", "claude-code", "--no-mcp", "--no-inbox").exit_code == 0
    assert check("hooks")["status"] == "ok"
