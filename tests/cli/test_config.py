"""`toka config show|get|set|path`: TOML written with tomli-w, read back, env over file over default."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from cli_support import assert_error, invoke, invoke_json, toka

from daemon.paths import resolve_paths


def _source(key: str) -> tuple[object, str]:
    rows = json.loads(invoke("config", "show", "--json").stdout)["settings"]
    (row,) = [r for r in rows if r["key"] == key]
    return row["value"], row["source"]


def test_path_is_in_toka_home(toka_home: Path) -> None:
    result = toka("config", "path")
    assert result.returncode == 0
    assert result.stdout == f"{toka_home / 'config.toml'}\n"
    assert not (toka_home / "config.toml").exists()  # printing the path creates nothing


def test_set_writes_toml_and_get_reads_it(toka_home: Path) -> None:
    result = toka("config", "set", "store.durability", "full")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == f"set store.durability = full in {toka_home / 'config.toml'}\n"
    assert toka("config", "set", "shutdown_deadline", "2.5").returncode == 0
    assert tomllib.loads((toka_home / "config.toml").read_text()) == {
        "store": {"durability": "full"},
        "daemon": {"shutdown_deadline": 2.5},
    }
    assert toka("config", "get", "store.durability").stdout == "full\n"
    assert invoke("config", "get", "durability").stdout == "full\n"
    assert _source("store.durability") == ("full", str(toka_home / "config.toml"))
    assert _source("daemon.shutdown_deadline") == (2.5, str(toka_home / "config.toml"))
    assert _source("store.backend") == ("sqlite", "default")


def test_set_keeps_the_rest_of_the_file(toka_home: Path) -> None:
    (toka_home / "config.toml").write_text('future_key = "kept"\n\n[store]\nbackend = "sqlite"\n')
    assert invoke("config", "set", "max_line_bytes", "8192").exit_code == 0
    assert tomllib.loads((toka_home / "config.toml").read_text()) == {
        "future_key": "kept",
        "store": {"backend": "sqlite"},
        "daemon": {"max_line_bytes": 8192},
    }


def test_env_overrides_the_file(toka_home: Path) -> None:
    assert invoke("config", "set", "durability", "full").exit_code == 0
    result = toka("config", "show", "--json", env={"TOKA_DURABILITY": "normal"})
    (row,) = [r for r in json.loads(result.stdout)["settings"] if r["key"] == "store.durability"]
    assert (row["value"], row["source"]) == ("normal", "env TOKA_DURABILITY")
    got = toka("config", "get", "durability", "--json", env={"TOKA_DURABILITY": "normal"})
    assert json.loads(got.stdout) == {"key": "store.durability", "value": "normal", "source": "env TOKA_DURABILITY"}
    # The daemon resolves the same way.
    status = toka("status", "--json", env={"TOKA_DURABILITY": "normal"})
    assert json.loads(status.stdout)["durability"] == "normal"


def test_the_daemon_uses_the_file(toka_home: Path) -> None:
    assert invoke("config", "set", "durability", "full").exit_code == 0
    assert json.loads(invoke("status", "--json").stdout)["durability"] == "full"


def test_show_as_a_table() -> None:
    result = toka("config", "show", env={"TOKA_START_TIMEOUT": "3"})
    assert result.returncode == 0
    rows = [line.split() for line in result.stdout.splitlines()]
    assert rows[0] == ["key", "value", "source"]
    assert ["daemon.start_timeout", "3.0", "env", "TOKA_START_TIMEOUT"] in rows
    assert ["store.durability", "normal", "default"] in rows


def test_invalid_value_is_a_config_error(toka_home: Path) -> None:
    for key, value, why in (
        ("durability", "sometimes", "must be one of normal, full"),
        ("max_line_bytes", "lots", "must be a whole number from 4096 to 1073741824, got 'lots'"),
        ("shutdown_deadline", "0", "must be a number from 0.1 to 3600, got 0.0"),
    ):
        result = invoke("config", "set", key, value)
        assert result.exit_code == 2, (key, value)
        assert_error(result.stderr, contains=why, hint=False)
    assert not (toka_home / "config.toml").exists()


def test_invalid_env_value_is_a_config_error() -> None:
    result = toka("config", "show", env={"TOKA_DURABILITY": "sometimes"})
    assert result.returncode == 2
    assert_error(result.stderr, contains="store.durability from env TOKA_DURABILITY must be one of", hint=False)


def test_unknown_key() -> None:
    for command in (["get", "store.colour"], ["set", "colour", "blue"]):
        result = invoke("config", *command)
        assert result.exit_code == 2, command
        assert_error(result.stderr, contains="unknown setting")
        assert "`toka config show` lists them all" in result.stderr


def test_unknown_key_says_what_it_may_have_meant(toka_home: Path) -> None:
    for command in (["get", "durabilty"], ["set", "store.durabilty", "full"], ["get", "daemon.durability"]):
        result = invoke("config", *command)
        assert result.exit_code == 2, command
        assert_error(result.stderr, contains="(did you mean store.durability?)")
    assert not (toka_home / "config.toml").exists()


def test_invalid_toml_names_the_file(toka_home: Path) -> None:
    config = toka_home / "config.toml"
    config.write_text("[store\ndurability = \n")
    for command in (["config", "show"], ["config", "get", "durability"], ["config", "set", "durability", "full"]):
        result = toka(*command)
        assert result.returncode == 2, command
        error = assert_error(result.stderr, contains=str(config))
        assert "is not valid TOML" in error
    assert config.read_text() == "[store\ndurability = \n"  # set did not overwrite it


def test_invalid_toml_stops_the_daemon_from_starting(toka_home: Path) -> None:
    (toka_home / "config.toml").write_text("not toml at all\n")
    result = toka("status")
    assert result.returncode == 2
    assert_error(result.stderr, contains=str(toka_home / "config.toml"))


def test_set_keeps_the_comments_and_order_of_the_file(toka_home: Path) -> None:
    original = (
        "# toka's settings, by hand\n"
        "[store]\n"
        'backend = "sqlite"  # the default, said out loud\n'
        "\n"
        "# the daemon\n"
        "[daemon]\n"
        "shutdown_deadline = 3.0\n"
    )
    (toka_home / "config.toml").write_text(original)
    assert invoke("config", "set", "durability", "full").exit_code == 0
    assert invoke("config", "set", "shutdown_deadline", "2.5").exit_code == 0
    assert (toka_home / "config.toml").read_text() == original.replace(
        'backend = "sqlite"  # the default, said out loud\n',
        'backend = "sqlite"  # the default, said out loud\ndurability = "full"\n',
    ).replace("shutdown_deadline = 3.0", "shutdown_deadline = 2.5")


def test_config_show_toml_is_a_config_file_that_resolves_to_the_same_settings(
    toka_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("TOKA_WATCH_AGENTS", "TOKA_END_AFTER_S", "TOKA_RECALL_EMBEDDING_MODEL"):  # set for every test
        monkeypatch.delenv(name)  # (tests/conftest.py)
    config = resolve_paths().config_file
    config.write_text('[inject]\nmode = "handoffs"\n\n[watch]\npaths = ["/tmp/a", "/tmp/b"]\n')
    before = invoke_json("config", "show")["settings"]
    shown = invoke("config", "show", "--toml")
    assert shown.exit_code == 0, shown.output
    document = tomllib.loads(shown.output)
    assert document["inject"]["mode"] == "handoffs" and document["watch"]["paths"] == ["/tmp/a", "/tmp/b"]
    config.write_text(shown.output)
    after = invoke_json("config", "show")["settings"]
    assert [(r["key"], r["value"]) for r in after] == [(r["key"], r["value"]) for r in before]
    assert {r["source"] for r in after} == {str(config)}
