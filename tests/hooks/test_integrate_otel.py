"""`toka integrate claude-code --otel` and `toka integrate codex --otel`: the agent's own telemetry
sent to toka's receiver with the receiver's token, every other setting kept, another exporter left
alone, the receiver turned on when it is off, and only toka's entries taken out again."""

from __future__ import annotations

import json
import stat
import tomllib
from pathlib import Path

import pytest
from test_integrate_mcp import CODEX_TOML, integrate, report

from daemon.config_file import load_settings
from daemon.otel.settings import OtelSettings
from daemon.paths import resolve_paths
from daemon.sections import SECTIONS

ENV = {
    "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
    "OTEL_LOGS_EXPORTER": "otlp",
    "OTEL_METRICS_EXPORTER": "otlp",
    "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
}
SETTINGS = {"model": "opus", "env": {"ANTHROPIC_BASE_URL": "http://proxy"}, "permissions": {"allow": ["Read"]}}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(SETTINGS, indent=2) + "\n")
    (tmp_path / "codex").mkdir()
    (tmp_path / "codex" / "config.toml").write_text(CODEX_TOML)
    return tmp_path


def listen() -> str:
    return load_settings(SECTIONS, resolve_paths().config_file).settings[OtelSettings].listen


def made_token() -> str:
    """The token the integration made for the receiver (the daemon reads the same file)."""
    path = resolve_paths().otel_token
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    return path.read_text().strip()


def test_claude_code_gets_the_env_block_and_keeps_every_other_setting(home: Path) -> None:
    result = report(integrate("claude-code", "--otel", "--no-mcp"))

    assert result["otel"] == {"state": "added", "endpoint": "http://127.0.0.1:4318", "listen": "127.0.0.1:4318",
                              "listen_set": True}  # fmt: skip
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["env"] == SETTINGS["env"] | ENV | {
        "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer {made_token()}"
    }
    assert (settings["model"], settings["permissions"]) == ("opus", SETTINGS["permissions"])
    assert listen() == "127.0.0.1:4318"
    again = report(integrate("claude-code", "--otel", "--no-mcp"))
    assert (again["otel"]["state"], again["otel"]["listen_set"], again["changed"]) == ("installed", False, False)


def test_the_endpoint_follows_toka_s_own_listen_address(home: Path) -> None:
    resolve_paths().config_file.write_text('[otel]\nlisten = "127.0.0.1:14318"\n')
    result = report(integrate("codex", "--otel", "--no-mcp", "--no-notify"))
    assert result["otel"]["listen_set"] is False
    exporter = tomllib.loads((home / "codex" / "config.toml").read_text())["otel"]["exporter"]
    assert exporter == {"otlp-http": {"endpoint": "http://127.0.0.1:14318/v1/logs", "protocol": "binary",
                                      "headers": {"Authorization": f"Bearer {made_token()}"}}}  # fmt: skip


def test_a_dry_run_writes_nothing(home: Path) -> None:
    before = (home / ".claude" / "settings.json").read_text()
    result = report(integrate("claude-code", "--otel", "--no-mcp", "--dry-run"))
    assert result["otel"]["state"] == "added" and "OTEL_EXPORTER_OTLP_ENDPOINT" in result["diff"]
    assert (home / ".claude" / "settings.json").read_text() == before
    assert listen() == ""
    assert not resolve_paths().otel_token.exists()  # nor the token


def test_a_dry_run_does_not_show_the_token(home: Path) -> None:
    integrate("codex", "--otel", "--no-mcp", "--no-notify")  # the token is made
    result = report(integrate("claude-code", "--otel", "--no-mcp", "--dry-run"))
    assert "OTEL_EXPORTER_OTLP_HEADERS" in result["diff"] and made_token() not in result["diff"]


def test_another_endpoint_is_left_as_it_is(home: Path) -> None:
    theirs = SETTINGS | {"env": {"OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector.example:4318"}}
    (home / ".claude" / "settings.json").write_text(json.dumps(theirs))
    result = report(integrate("claude-code", "--otel", "--no-mcp"))
    assert result["otel"]["state"] == "other"
    assert json.loads((home / ".claude" / "settings.json").read_text())["env"] == theirs["env"]
    config = home / "codex" / "config.toml"
    config.write_text(CODEX_TOML + '\n[otel]\nexporter = { otlp-http = { endpoint = "http://c:4318/v1/logs" } }\n')
    before = config.read_text()
    assert report(integrate("codex", "--otel", "--no-mcp", "--no-notify", "--no-hooks"))["otel"]["state"] == "other"
    assert config.read_text() == before


def test_uninstall_takes_out_only_what_points_at_toka(home: Path) -> None:
    integrate("claude-code", "--otel", "--no-mcp")
    integrate("codex", "--otel", "--no-mcp", "--no-notify")
    assert "[otel]" in (home / "codex" / "config.toml").read_text()

    claude = report(integrate("claude-code", "--uninstall", "--no-mcp"))
    codex = report(integrate("codex", "--uninstall", "--no-mcp", "--no-notify"))

    assert (claude["otel"]["state"], codex["otel"]["state"]) == ("removed", "removed")
    assert json.loads((home / ".claude" / "settings.json").read_text()) == SETTINGS
    assert (home / "codex" / "config.toml").read_text() == CODEX_TOML


def test_codex_keeps_its_comments_and_other_otel_keys(home: Path) -> None:
    config = home / "codex" / "config.toml"
    config.write_text(CODEX_TOML + "\n[otel]\n# prompts stay out\nlog_user_prompt = false\n")
    report(integrate("codex", "--otel", "--no-mcp", "--no-notify"))
    text = config.read_text()
    assert "# My Codex settings: keep this comment." in text and "# prompts stay out" in text
    otel = tomllib.loads(text)["otel"]
    assert otel["log_user_prompt"] is False
    assert otel["exporter"]["otlp-http"]["endpoint"] == "http://127.0.0.1:4318/v1/logs"


def test_integrate_otel_writes_the_receivers_token_into_each_agents_config(home: Path) -> None:
    claude, codex = home / ".claude" / "settings.json", home / "codex" / "config.toml"
    claude.chmod(0o644)
    codex.chmod(0o644)

    integrate("claude-code", "--otel", "--no-mcp")
    integrate("codex", "--otel", "--no-mcp", "--no-notify")

    token = made_token()
    assert len(token) >= 32
    env = json.loads(claude.read_text())["env"]
    assert env["OTEL_EXPORTER_OTLP_HEADERS"] == f"Authorization=Bearer {token}"
    http = tomllib.loads(codex.read_text())["otel"]["exporter"]["otlp-http"]
    assert http["headers"] == {"Authorization": f"Bearer {token}"}
    # The token is a secret now in both files: they are the user's alone.
    assert (stat.S_IMODE(claude.stat().st_mode), stat.S_IMODE(codex.stat().st_mode)) == (0o600, 0o600)
    again = (
        report(integrate("claude-code", "--otel", "--no-mcp")),
        report(integrate("codex", "--otel", "--no-mcp", "--no-notify")),
    )
    assert [result["otel"]["state"] for result in again] == ["installed", "installed"]


def test_a_configured_token_is_the_one_written_and_none_without_require_token(home: Path) -> None:
    resolve_paths().config_file.write_text('[otel]\nlisten = "127.0.0.1:4318"\ntoken = "mine-0123"\n')
    integrate("claude-code", "--otel", "--no-mcp")
    env = json.loads((home / ".claude" / "settings.json").read_text())["env"]
    assert env["OTEL_EXPORTER_OTLP_HEADERS"] == "Authorization=Bearer mine-0123"
    assert not resolve_paths().otel_token.exists()

    resolve_paths().config_file.write_text('[otel]\nlisten = "127.0.0.1:4318"\nrequire_token = false\n')
    integrate("codex", "--otel", "--no-mcp", "--no-notify")
    http = tomllib.loads((home / "codex" / "config.toml").read_text())["otel"]["exporter"]["otlp-http"]
    assert "headers" not in http


def test_an_older_installation_gets_the_token_added(home: Path) -> None:
    older = SETTINGS | {"env": SETTINGS["env"] | ENV}
    (home / ".claude" / "settings.json").write_text(json.dumps(older))
    result = report(integrate("claude-code", "--otel", "--no-mcp"))
    assert result["otel"]["state"] == "updated"
    env = json.loads((home / ".claude" / "settings.json").read_text())["env"]
    assert env["OTEL_EXPORTER_OTLP_HEADERS"] == f"Authorization=Bearer {made_token()}"
