"""`toka config show|get|set` never print the password of store.url, whichever form it takes and
wherever it is set (TOKA_STORE_URL or config.toml); they print the URL with it hidden."""

from __future__ import annotations

import json
import tomllib
import uuid
from pathlib import Path

import pytest
from cli_support import invoke, toka

PASSWORD = "pw" + uuid.uuid4().hex
URLS = {
    "url": (f"postgresql://toka:{PASSWORD}@db.internal/toka", "postgresql://toka:***@db.internal/toka"),
    "parameter": (
        f"postgresql://toka@db.internal/toka?password={PASSWORD}&sslmode=require",
        "postgresql://toka@db.internal/toka?password=***&sslmode=require",
    ),
    "key=value": (f"host=db.internal dbname=toka password={PASSWORD}", "host=db.internal dbname=toka password=***"),
}


@pytest.mark.parametrize("form", URLS)
def test_config_show_json_hides_the_password_of_the_env_url(form: str) -> None:
    url, hidden = URLS[form]

    result = toka("config", "show", "--json", env={"TOKA_STORE_URL": url})

    assert result.returncode == 0, result.stderr
    assert PASSWORD not in result.stdout + result.stderr
    (row,) = [r for r in json.loads(result.stdout)["settings"] if r["key"] == "store.url"]
    assert (row["value"], row["source"]) == (hidden, "env TOKA_STORE_URL")


def test_config_show_as_a_table_hides_the_password() -> None:
    url, hidden = URLS["url"]

    # Wide enough that the table wraps no value: a password cut in two would hide nothing.
    result = toka("config", "show", env={"TOKA_STORE_URL": url, "COLUMNS": "400"})

    assert result.returncode == 0, result.stderr
    assert PASSWORD not in result.stdout + result.stderr
    assert ["store.url", hidden, "env", "TOKA_STORE_URL"] in [line.split() for line in result.stdout.splitlines()]


@pytest.mark.parametrize("form", URLS)
def test_config_get_hides_the_password_of_the_env_url(form: str) -> None:
    url, hidden = URLS[form]

    plain = toka("config", "get", "store.url", env={"TOKA_STORE_URL": url})
    as_json = invoke("config", "get", "url", "--json", env={"TOKA_STORE_URL": url})

    assert (plain.returncode, as_json.exit_code) == (0, 0), (plain.stderr, as_json.stderr)
    assert PASSWORD not in plain.stdout + plain.stderr + as_json.stdout + as_json.stderr
    assert plain.stdout == hidden + "\n"
    assert json.loads(as_json.stdout) == {"key": "store.url", "value": hidden, "source": "env TOKA_STORE_URL"}


def test_config_set_keeps_the_password_in_the_file_and_shows_it_nowhere(toka_home: Path) -> None:
    url, hidden = URLS["url"]

    written = toka("config", "set", "store.url", url)
    got = toka("config", "get", "store.url", "--json")
    shown = toka("config", "show", "--json")

    assert [r.returncode for r in (written, got, shown)] == [0, 0, 0], written.stderr
    assert written.stderr == f"set store.url = {hidden} in {toka_home / 'config.toml'}\n"
    assert tomllib.loads((toka_home / "config.toml").read_text())["store"]["url"] == url  # the daemon needs it
    assert PASSWORD not in "".join(r.stdout + r.stderr for r in (written, got, shown))
    assert json.loads(got.stdout) == {"key": "store.url", "value": hidden, "source": str(toka_home / "config.toml")}
