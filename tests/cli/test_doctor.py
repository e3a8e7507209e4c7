"""`toka doctor`: each check on a real home and a real daemon, its fix, and the JSON shape."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import import_example, invoke
from daemons import Spawned
from typer.testing import CliRunner, Result

from daemon.client.doctor import database_health
from store.sqlite.health import inspect_database
from toka_cli.base import make_app
from toka_cli.commands import doctor

NAMES = [
    "daemon",
    "socket",
    "files",
    "database",
    "schema",
    "clock",
    "disk",
    "config",
    "watch",
    "hooks",
    "mcp",
    "codex_notify",
    "daemon_clock",
    "export",
    "recall",
    "prices",
    "heads",
    "tables",
    "otel",
    "agents",
]


def _app() -> Any:
    app = make_app("doctor alone, as toka_cli.main registers it")

    @app.callback()
    def root() -> None:
        """Keeps `doctor` a subcommand."""

    doctor.register(app)
    return app


def run_doctor(*args: str) -> Result:
    return CliRunner().invoke(_app(), ["doctor", *args])


def checks_of(result: Result) -> dict[str, dict[str, Any]]:
    document = json.loads(result.stdout)
    return {check["name"]: check for check in document["checks"]}


@pytest.fixture(autouse=True)
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads the real ~/.claude or the checkout's .claude."""
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    return home


def write_config(toka_home: Path, text: str) -> None:
    (toka_home / "config.toml").write_text(text, encoding="utf-8")


def test_a_healthy_home_is_ok(daemon: Spawned) -> None:
    import_example()
    result = run_doctor("--json")
    assert result.exit_code == 0, result.output
    checks = checks_of(result)
    assert {name: check["status"] for name, check in checks.items()} == dict.fromkeys(NAMES, "ok")
    assert f"pid {daemon.process.pid}" in checks["daemon"]["detail"]
    assert "quick_check" in checks["database"]["detail"]
    assert checks["hooks"]["fix"] == "toka integrate claude-code"  # not installed: a note, not a failure


def test_the_json_shape_is_pinned(daemon: Spawned) -> None:
    document = json.loads(run_doctor("--json").stdout)
    assert set(document) == {"ok", "checks"} and document["ok"] is True
    assert [check["name"] for check in document["checks"]] == NAMES
    for check in document["checks"]:
        assert set(check) == {"name", "status", "detail", "fix"}
        assert check["status"] in ("ok", "warning", "problem")
        assert isinstance(check["detail"], str) and check["detail"]
        assert check["fix"] is None or isinstance(check["fix"], str)


def test_human_output_is_one_line_per_check(daemon: Spawned) -> None:
    result = run_doctor()
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [line.split()[1] for line in lines] == NAMES
    assert all(line.split()[0] == "ok" for line in lines)


def test_models_seen_but_unpriced_are_a_warning_naming_them(daemon: Spawned, tmp_path: Path) -> None:
    from daemon.client.sync import Client
    from daemon.client.transfer import import_files

    rollout = tmp_path / "rollout-2026-11-02T10-00-00-house.jsonl"
    lines = [
        {"timestamp": "2026-11-02T10:00:00.000Z", "type": "session_meta",
         "payload": {"id": "house-1", "timestamp": "2026-11-02T10:00:00Z", "cwd": "/work", "cli_version": "0.171.0"}},
        {"timestamp": "2026-11-02T10:00:01.000Z", "type": "turn_context", "payload": {"model": "house-model-7"}},
        {"timestamp": "2026-11-02T10:00:02.000Z", "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 900, "cached_input_tokens": 0, "output_tokens": 40,
                                  "reasoning_output_tokens": 0, "total_tokens": 940},
            "last_token_usage": {"input_tokens": 900, "cached_input_tokens": 0, "output_tokens": 40,
                                 "reasoning_output_tokens": 0, "total_tokens": 940},
            "model_context_window": 258400}}},
    ]  # fmt: skip
    rollout.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with Client() as client:
        import_files(client, [rollout])
    check = checks_of(run_doctor("--json"))["prices"]
    assert check["status"] == "warning"
    assert check["detail"] == "1 call of models toka has no price for: house-model-7"
    assert check["fix"].startswith('toka config set models.prices \'{"house-model-7": ')


def test_a_stopped_daemon_is_a_warning_and_doctor_does_not_start_it(toka_home: Path) -> None:
    result = run_doctor("--json")
    assert result.exit_code == 0, result.output
    checks = checks_of(result)
    assert checks["daemon"]["status"] == "warning"
    assert checks["daemon"]["fix"] == "toka daemon start"
    assert not (toka_home / "run" / "toka.sock").exists()
    assert not (toka_home / "toka.db").exists()


def test_a_bad_config_value_is_a_problem_with_its_fix(toka_home: Path) -> None:
    write_config(toka_home, '[store]\ndurability = "sometimes"\n')
    result = run_doctor("--json")
    assert result.exit_code == 1
    check = checks_of(result)["config"]
    assert check["status"] == "problem"
    assert "store.durability" in check["detail"] and "sometimes" in check["detail"]
    assert check["fix"] == "toka config set store.durability VALUE"


def test_a_bad_environment_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKA_MAX_HANDOFFS", "many")
    check = checks_of(run_doctor("--json"))["config"]
    assert check["status"] == "problem" and check["fix"] == "unset TOKA_MAX_HANDOFFS"


def test_a_config_that_is_not_toml_is_a_problem(toka_home: Path) -> None:
    write_config(toka_home, "[store\n")
    result = run_doctor("--json")
    assert result.exit_code == 1
    check = checks_of(result)["config"]
    assert check["status"] == "problem" and "not valid TOML" in check["detail"]
    assert check["fix"] == f"$EDITOR {toka_home / 'config.toml'}"


def test_a_missing_watched_path_is_a_problem(toka_home: Path, tmp_path: Path) -> None:
    there = tmp_path / "there"
    there.mkdir()
    gone = tmp_path / "gone"
    write_config(toka_home, f'[watch]\npaths = ["{there}", "{gone}"]\n')
    result = run_doctor("--json")
    assert result.exit_code == 1
    check = checks_of(result)["watch"]
    assert check["status"] == "problem"
    assert str(gone) in check["detail"] and str(there) not in check["detail"]
    assert check["fix"] == f"mkdir -p {gone}, or toka config set watch.paths '{there}'"


def test_changed_socket_permissions_are_a_problem(daemon: Spawned) -> None:
    os.chmod(daemon.paths.socket, 0o666)
    os.chmod(daemon.paths.runtime_dir, 0o755)
    try:
        result = run_doctor("--json")
    finally:
        os.chmod(daemon.paths.runtime_dir, 0o700)
    assert result.exit_code == 1
    check = checks_of(result)["socket"]
    assert check["status"] == "problem"
    assert f"{daemon.paths.socket} is 0666, not 0600" in check["detail"]
    assert f"{daemon.paths.runtime_dir} is 0755, not 0700" in check["detail"]
    assert check["fix"].endswith("toka daemon restart")


def test_an_event_from_the_future_is_a_clock_problem(daemon: Spawned) -> None:
    with daemon.client() as client:
        client.record("s", "k", {}, ts="2999-01-01T00:00:00Z")
    result = run_doctor("--json")
    assert result.exit_code == 1
    check = checks_of(result)["clock"]
    assert check["status"] == "problem" and "2999-01-01T00:00:00" in check["detail"]
    assert check["fix"] == "timedatectl set-ntp true"


def test_a_database_from_a_newer_toka_is_a_problem(toka_home: Path) -> None:
    with sqlite3.connect(toka_home / "toka.db") as db:
        db.execute("PRAGMA user_version = 999")
    result = run_doctor("--json")
    assert result.exit_code == 1
    checks = checks_of(result)
    assert checks["database"]["status"] == "ok"
    assert checks["schema"]["status"] == "problem" and checks["schema"]["fix"] == "pip install -U toka"


def test_a_file_that_is_not_a_database_is_a_problem(toka_home: Path) -> None:
    (toka_home / "toka.db").write_bytes(b"not a database, not at all" * 200)
    result = run_doctor("--json")
    assert result.exit_code == 1
    check = checks_of(result)["database"]
    assert check["status"] == "problem" and check["fix"] == "toka admin recover"


def test_installed_hooks_are_reported(daemon: Spawned, claude_home: Path) -> None:
    assert invoke("integrate", "claude-code").exit_code == 0
    check = checks_of(run_doctor("--json"))["hooks"]
    assert check == {
        "name": "hooks",
        "status": "ok",
        "detail": f"Claude Code hooks installed in {claude_home / '.claude' / 'settings.json'}",
        "fix": None,
    }


def test_hooks_on_some_events_only_are_a_warning(claude_home: Path) -> None:
    settings = claude_home / ".claude" / "settings.json"
    settings.parent.mkdir()
    toka = Path(sys.executable).parent / "toka"
    hook = {"hooks": [{"type": "command", "command": f"{toka} hook claude-code"}]}
    settings.write_text(json.dumps({"hooks": {"Stop": [hook]}}))
    result = run_doctor("--json")
    assert result.exit_code == 0
    check = checks_of(result)["hooks"]
    assert check["status"] == "warning" and "SessionStart" in check["detail"]
    assert check["fix"] == "toka integrate claude-code"


def test_the_database_facts_come_from_the_daemon_and_from_the_file_alike(daemon: Spawned) -> None:
    import_example()
    size = "size_bytes"  # the daemon may still be writing (the projector, the embedder): its WAL grows
    with daemon.client() as client:
        answered = client.call("doctor.database")
    again = database_health(daemon.paths)
    assert {k: v for k, v in again.items() if k != size} == {k: v for k, v in answered.items() if k != size}
    assert again[size] >= answered[size] > 0
    assert answered["exists"] and answered["quick_check"] == ["ok"] and answered["unreadable"] is None
    assert answered["schema_version"] == answered["schema_current"] and answered["newest"] is not None
    assert daemon.stop() == 0
    read_here = database_health(daemon.paths)  # no daemon now: the client reads the file itself
    assert not daemon.paths.socket.exists()
    assert read_here == inspect_database(daemon.paths.database).to_json()
    # The WAL was checkpointed into the file on the way out: the size is the file's alone now.
    assert {k: v for k, v in read_here.items() if k != size} == {k: v for k, v in answered.items() if k != size}


def test_doctor_exits_1_with_an_error_naming_the_failed_checks(toka_home: Path) -> None:
    write_config(toka_home, "[store\n")
    result = run_doctor()
    assert result.exit_code == 1
    assert result.stderr.startswith("error: 1 of 20 checks found a problem (config)\n")


def test_the_database_size_counts_the_wal_as_stats_does(daemon: Spawned) -> None:
    import_example()
    with daemon.client() as client:
        health = client.call("doctor.database")
        stats = client.call("stats")
    wal = daemon.paths.database.with_name(daemon.paths.database.name + "-wal")
    assert wal.stat().st_size > 0  # the daemon runs: the example's events are in the WAL
    assert health["size_bytes"] == stats["disk_bytes"] > daemon.paths.database.stat().st_size


def test_doctor_reports_an_otel_listen_that_the_daemon_does_not_serve() -> None:
    import socket

    from cli_support import invoke_json

    invoke_json("status")  # the daemon starts without otel.listen
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        assert invoke("config", "set", "otel.listen", f"127.0.0.1:{port}").exit_code == 0
        otel = checks_of(run_doctor("--json"))["otel"]
        assert otel["status"] == "problem" and "the running daemon started without it" in otel["detail"], otel
        assert otel["fix"] == "toka daemon restart"
        assert invoke("daemon", "restart").exit_code == 0  # now it tries the port, which is taken
        otel = checks_of(run_doctor("--json"))["otel"]
        assert otel["status"] == "problem" and f"cannot listen on 127.0.0.1:{port}" in otel["detail"], otel
    finally:
        taken.close()
    assert invoke("daemon", "restart").exit_code == 0  # the port is free now
    otel = checks_of(run_doctor("--json"))["otel"]
    assert otel["status"] == "ok" and otel["detail"].startswith(f"the OpenTelemetry receiver serves 127.0.0.1:{port}")
