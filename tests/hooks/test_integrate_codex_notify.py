"""`toka integrate codex`: `toka hook codex` as Codex's notify program, by its absolute path,
another program's notify left alone, and only toka's taken out again."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from test_integrate_mcp import CODEX_TOML, TOKA, integrate, report

NOTIFY = [TOKA, "hook", "codex"]


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    path = tmp_path / "codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX_TOML)
    return path


def test_notify_is_added_at_the_top_level_with_the_absolute_path(config: Path) -> None:
    result = report(integrate("codex"))
    assert result["notify"] == {"state": "added", "command": f"{TOKA} hook codex"}
    settings = tomllib.loads(config.read_text())
    assert settings["notify"] == NOTIFY  # top level: not swallowed by the tables below it
    assert settings["approval_policy"] == "never" and settings["mcp_servers"]["docs"]["command"] == "npx"
    assert "notify" not in settings["model_providers"]["fake"]
    assert "# My Codex settings: keep this comment." in config.read_text()


def test_installing_twice_changes_nothing_and_uninstall_restores_the_file(config: Path) -> None:
    integrate("codex")
    text = config.read_text()
    again = report(integrate("codex"))
    assert again["notify"]["state"] == "installed" and again["changed"] is False
    assert config.read_text() == text
    gone = report(integrate("codex", "--uninstall"))
    assert gone["notify"]["state"] == "removed"
    assert config.read_text() == CODEX_TOML


def test_another_programs_notify_is_left_alone(config: Path) -> None:
    mine = 'notify = ["notify-send", "codex"]\n'
    config.write_text(mine + CODEX_TOML)
    result = report(integrate("codex"))
    assert result["notify"]["state"] == "other"
    assert result["mcp"]["state"] == "added"  # the server is still installed
    assert tomllib.loads(config.read_text())["notify"] == ["notify-send", "codex"]
    assert report(integrate("codex", "--uninstall"))["notify"]["state"] == "other"
    assert config.read_text() == mine + CODEX_TOML


def test_a_toka_notify_of_another_path_is_updated(config: Path) -> None:
    config.write_text('notify = ["toka", "hook", "codex"]\n' + CODEX_TOML)
    assert report(integrate("codex"))["notify"]["state"] == "updated"
    assert tomllib.loads(config.read_text())["notify"] == NOTIFY


def test_no_notify_leaves_it_out(config: Path) -> None:
    result = report(integrate("codex", "--no-notify"))
    assert result["notify"] is None
    assert "notify" not in tomllib.loads(config.read_text())


def test_without_tomlkit_integrate_codex_is_one_line_naming_the_install(config: Path) -> None:
    import subprocess
    import sys

    before = config.read_text()
    code = (
        "import sys\n"
        "sys.modules['tomlkit'] = None  # as if it had been removed after the install\n"
        "sys.argv = ['toka', 'integrate', 'codex']\n"
        "from toka_cli.main import main\n"
        "main()\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        "error: `toka integrate codex` needs tomlkit, which is not installed; nothing was changed",
        "hint: pip install 'tomlkit>=0.12' (toka depends on it; reinstalling toka brings it back too)",
    ]
    assert config.read_text() == before
