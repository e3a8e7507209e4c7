"""A bad config.toml stops toka with one line naming the file, the key and what it may be: keys
that are no setting (with what they may have meant), numbers out of their range, choices out of
their set, settings out of order. `toka config set` checks the same way and echoes plain values."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from cli_support import assert_error, invoke, toka

from daemon.config_values import shown_number
from daemon.sections import SECTIONS
from store.errors import ConfigError


def write(toka_home: Path, text: str) -> Path:
    config = toka_home / "config.toml"
    config.write_text(text, encoding="utf-8")
    return config


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[store]\ndurabilty = "full"\n', "unknown key store.durabilty (did you mean store.durability?)"),
        ('[daemon]\ndurability = "full"\n', "unknown key daemon.durability (did you mean store.durability?)"),
        ('durability = "full"\n', "unknown key durability (did you mean store.durability?)"),
        ('[stroe]\ndurability = "full"\n', "unknown table [stroe] (did you mean store?)"),
    ],
    ids=["typo", "wrong_table", "no_table", "table_typo"],
)
def test_a_key_that_is_no_setting_is_an_error_saying_what_it_may_mean(toka_home: Path, text: str, said: str) -> None:
    config = write(toka_home, text)
    result = toka("config", "show")
    assert result.returncode == 2
    assert assert_error(result.stderr) == f"error: {config}: {said}"


def test_a_typo_keeps_the_daemon_from_starting_and_doctor_reports_it(toka_home: Path) -> None:
    config = write(toka_home, '[store]\ndurabilty = "full"\n')
    status = toka("status")
    assert status.returncode == 2
    assert_error(status.stderr, contains=f"{config}: unknown key store.durabilty (did you mean store.durability?)")
    assert not (toka_home / "run" / "toka.pid").exists()  # no daemon started half-configured
    doctor = json.loads(invoke("doctor", "--json").stdout)
    (check,) = [check for check in doctor["checks"] if check["name"] == "config"]
    assert check["status"] == "problem" and "did you mean store.durability?" in check["detail"], check
    assert doctor["ok"] is False


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("max_line_bytes = 10", "daemon.max_line_bytes from {config} must be a whole number from 4096 to 1073741824"),
        (
            "shutdown_deadline = 1e400",
            "daemon.shutdown_deadline from {config} must be a number from 0.1 to 3600, got inf",
        ),
        (
            "shutdown_deadline = nan",
            "daemon.shutdown_deadline from {config} must be a number from 0.1 to 3600, got nan",
        ),
        ("max_connections = 0", "daemon.max_connections from {config} must be a whole number from 8 to 65536, got 0"),
    ],
    ids=["tiny_line", "infinite_deadline", "nan_deadline", "no_connections"],
)
def test_a_number_out_of_its_range_keeps_the_daemon_from_starting(toka_home: Path, text: str, said: str) -> None:
    config = write(toka_home, f"[daemon]\n{text}\n")
    result = toka("status")
    assert result.returncode == 2
    assert_error(result.stderr, contains=said.format(config=config))
    assert not (toka_home / "run" / "toka.pid").exists()


def test_the_daemon_run_directly_says_the_same_in_one_line(toka_home: Path) -> None:
    config = write(toka_home, "[daemon]\nmax_line_bytes = 10\n")
    result = subprocess.run(
        [sys.executable, "-m", "daemon"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
    )
    assert result.returncode == 2
    error = assert_error(result.stderr)
    assert error == f"error: daemon.max_line_bytes from {config} must be a whole number from 4096 to 1073741824, got 10"
    assert result.stderr.splitlines()[1] == "hint: its default is 4194304"


def test_an_environment_value_out_of_range_names_its_variable() -> None:
    result = toka("config", "show", env={"TOKA_SHUTDOWN_DEADLINE": "inf"})
    assert result.returncode == 2
    assert_error(result.stderr, contains="daemon.shutdown_deadline from env TOKA_SHUTDOWN_DEADLINE must be a number")


def test_thresholds_out_of_order_name_both(toka_home: Path) -> None:
    config = write(toka_home, "[lifecycle]\nwarning_pct = 95\n")
    result = toka("status")
    assert result.returncode == 2
    assert_error(
        result.stderr,
        contains=f"lifecycle.warning_pct (95.0, from {config}) must be below lifecycle.critical_pct (90.0, the default",
    )
    write(toka_home, "[daemon]\nmax_line_bytes = 8388608\nmax_buffered_bytes = 4194304\n")
    assert_error(toka("config", "show").stderr, contains="daemon.max_line_bytes (8388608, from")


def test_every_number_has_a_range_that_coerce_holds() -> None:
    for name, spec in SECTIONS.by_name.items():
        if type(spec.default) not in (int, float):
            continue
        low, high = spec.metadata["bounds"]
        assert low <= spec.default <= high, name
        assert SECTIONS.allowed(name) == f"{shown_number(low)} to {shown_number(high)}", name
        assert SECTIONS.coerce(name, str(low), "test") == low and SECTIONS.coerce(name, str(high), "test") == high
        for wrong in (low - 1, high * 2 + 1, math.inf, math.nan):
            with pytest.raises(ConfigError, match=f"{SECTIONS.key_of(name)} from test must be"):
                SECTIONS.coerce(name, wrong, "test")


def test_an_enumeration_says_its_choices_and_what_was_meant() -> None:
    with pytest.raises(ConfigError) as raised:
        SECTIONS.coerce("durability", "ful", "test")
    assert (
        raised.value.message == "store.durability from test must be one of normal, full, got 'ful' (did you mean full?)"
    )
    assert SECTIONS.allowed("durability") == "normal, full"
    with pytest.raises(ConfigError, match="unknown emial \\(did you mean email\\?\\)"):
        SECTIONS.coerce("kinds", "emial", "test")


def test_config_set_echoes_plain_values(toka_home: Path) -> None:
    paths = toka("config", "set", "watch.paths", "/a:/b")
    assert paths.returncode == 0, paths.stderr
    assert paths.stderr == f"set watch.paths = /a, /b in {toka_home / 'config.toml'}\n"
    flag = toka("config", "set", "save_markdown", "yes")
    assert flag.stderr == f"set handoff.save_markdown = true in {toka_home / 'config.toml'}\n"
    assert tomllib.loads((toka_home / "config.toml").read_text()) == {
        "watch": {"paths": ["/a", "/b"]},
        "handoff": {"save_markdown": True},
    }


def test_config_set_refuses_what_the_daemon_would_refuse(toka_home: Path) -> None:
    assert toka("config", "set", "critical_pct", "80").returncode == 0
    before = (toka_home / "config.toml").read_text()
    for key, value, said in (
        (
            "warning_pct",
            "85",
            "lifecycle.warning_pct (85.0, from the command line) must be below lifecycle.critical_pct",
        ),
        ("max_line_bytes", "10", "daemon.max_line_bytes from the command line must be a whole number from 4096"),
        ("shutdown_deadline", "1e400", "must be a number from 0.1 to 3600, got inf"),
    ):
        result = toka("config", "set", key, value)
        assert result.returncode == 2, (key, value)
        assert_error(result.stderr, contains=said)
    assert (toka_home / "config.toml").read_text() == before


def test_config_show_says_what_each_setting_allows() -> None:
    rows = {row["key"]: row for row in json.loads(invoke("config", "show", "--json").stdout)["settings"]}
    assert rows["daemon.max_line_bytes"]["allowed"] == "4096 to 1073741824"
    assert rows["store.durability"]["allowed"] == "normal, full"
    assert rows["handoff.save_markdown"]["allowed"] == "true, false"
    assert rows["compression.summarizer"]["allowed"] == "text"
