"""`toka integrate claude-code|codex`: `toka mcp` installed as an MCP server, everything else kept."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from toka_cli.main import app

TOKA = str((Path(sys.executable).parent / "toka").absolute())


def _env_line() -> str:
    """Where toka's data is, written into Codex's entry: Codex passes its servers no TOKA_HOME."""
    return f'env = {{TOKA_HOME = "{os.environ["TOKA_HOME"]}"}}\n'


CLAUDE_JSON = {
    "numStartups": 12,
    "hasCompletedOnboarding": True,
    "projects": {"/home/me/src": {"hasTrustDialogAccepted": True, "mcpServers": {}}},
    "mcpServers": {"github": {"type": "stdio", "command": "npx", "args": ["-y", "@mcp/github"], "env": {"T": "x"}}},
}
CODEX_TOML = """\
# My Codex settings: keep this comment.
model = "gpt-5.5"  # the default model
approval_policy = "never"

[mcp_servers.docs]
# docs server, started by npx
command = "npx"
args = ["-y", "docs-mcp"]

[model_providers.fake]
base_url = "http://127.0.0.1:9/v1"
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return tmp_path


def integrate(agent: str, *args: str) -> Result:
    result = CliRunner().invoke(app, ["integrate", agent, *args, "--json"])
    assert result.exit_code == 0, result.output
    return result


def report(result: Result) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_claude_code_gets_the_server_with_an_absolute_path_and_keeps_the_rest(home: Path) -> None:
    path = home / ".claude.json"
    original = json.dumps(CLAUDE_JSON, indent=2) + "\n"
    path.write_text(original)
    first = report(integrate("claude-code"))
    assert first["mcp"] == {"file": str(path), "state": "added", "command": f"{TOKA} mcp"}
    data = json.loads(path.read_text())
    assert data["mcpServers"]["toka"] == {"type": "stdio", "command": TOKA, "args": ["mcp"], "env": {}}
    assert Path(data["mcpServers"]["toka"]["command"]).is_absolute()
    assert {k: v for k, v in data.items() if k != "mcpServers"} == {
        k: v for k, v in CLAUDE_JSON.items() if k != "mcpServers"
    }
    assert data["mcpServers"]["github"] == CLAUDE_JSON["mcpServers"]["github"]
    installed = path.read_text()
    assert report(integrate("claude-code"))["mcp"]["state"] == "installed"
    assert path.read_text() == installed  # twice: the same file
    assert report(integrate("claude-code", "--uninstall"))["mcp"]["state"] == "removed"
    assert path.read_text() == original  # uninstall restores it


def test_claude_code_project_scope_writes_mcp_json(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    integrate("claude-code", "--project", str(project))
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["toka"]["command"] == TOKA
    assert not (home / ".claude.json").exists()
    integrate("claude-code", "--project", str(project), "--uninstall")
    assert json.loads((project / ".mcp.json").read_text()) == {}


def test_no_mcp_leaves_the_mcp_file_alone(home: Path) -> None:
    assert report(integrate("claude-code", "--no-mcp"))["mcp"] is None
    assert not (home / ".claude.json").exists()


def test_a_toka_server_of_another_command_is_left_alone(home: Path) -> None:
    mine = {"mcpServers": {"toka": {"command": "my-wrapper", "args": []}}}
    (home / ".claude.json").write_text(json.dumps(mine))
    assert report(integrate("claude-code"))["mcp"]["state"] == "other"
    assert json.loads((home / ".claude.json").read_text()) == mine


def test_a_moved_toka_is_updated_in_place(home: Path) -> None:
    (home / ".claude.json").write_text(
        json.dumps({"mcpServers": {"toka": {"command": "/old/venv/bin/toka", "args": ["mcp"]}}})
    )
    assert report(integrate("claude-code"))["mcp"]["state"] == "updated"
    assert json.loads((home / ".claude.json").read_text())["mcpServers"]["toka"]["command"] == TOKA


def test_codex_config_keeps_comments_other_servers_and_layout(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX_TOML)
    assert report(integrate("codex", "--no-notify", "--no-hooks"))["mcp"]["state"] == "added"
    text = path.read_text()
    # Every line of the user's file as it was, comments too; toka's table beside the other server.
    docs_end = CODEX_TOML.index("[model_providers.fake]")
    block = f'[mcp_servers.toka]\ncommand = "{TOKA}"\nargs = ["mcp"]\n{_env_line()}\n'
    assert text == CODEX_TOML[:docs_end] + block + CODEX_TOML[docs_end:]
    assert report(integrate("codex", "--no-notify", "--no-hooks"))["mcp"]["state"] == "installed"
    assert path.read_text() == text
    assert report(integrate("codex", "--uninstall"))["mcp"]["state"] == "removed"
    assert path.read_text() == CODEX_TOML


def test_codex_home_is_honoured_and_a_fresh_file_made(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "ch"))
    integrate("codex", "--no-hooks")  # the hooks' files: test_integrate_codex_hooks.py
    written = (tmp_path / "ch" / "config.toml").read_text()
    notify = f'notify = ["{TOKA}", "hook", "codex"]\n\n'
    assert written == notify + f'[mcp_servers.toka]\ncommand = "{TOKA}"\nargs = ["mcp"]\n{_env_line()}\n'


def test_dry_run_shows_the_diff_and_writes_nothing(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX_TOML)
    result = report(integrate("codex", "--dry-run"))
    assert result["dry_run"] is True and result["changed"] is True
    assert f'+command = "{TOKA}"' in result["diff"] and "+[mcp_servers.toka]" in result["diff"]
    assert path.read_text() == CODEX_TOML
    claude = report(integrate("claude-code", "--dry-run"))
    assert f'+      "command": "{TOKA}",' in claude["diff"]
    assert "PreToolUse" in claude["diff"]  # the hooks' diff too
    assert not (home / ".claude.json").exists() and not (home / ".claude").exists()


def test_invalid_toml_is_refused_and_left_alone(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text("model = \n")
    result = CliRunner().invoke(app, ["integrate", "codex"])
    assert result.exit_code == 2
    assert "is not valid TOML" in result.stderr
    assert path.read_text() == "model = \n"


def test_codex_gets_where_toka_keeps_its_data(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex starts MCP servers without the caller's TOKA_HOME or XDG_* variables."""
    import tomllib

    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/1000")
    integrate("codex")
    entry = tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]["toka"]
    assert entry["env"] == {"TOKA_HOME": os.environ["TOKA_HOME"], "XDG_RUNTIME_DIR": "/run/user/1000"}
    monkeypatch.setenv("TOKA_HOME", "/elsewhere")
    assert report(integrate("codex"))["mcp"]["state"] == "updated"  # another home: the entry follows
