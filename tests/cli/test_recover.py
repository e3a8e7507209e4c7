"""A damaged database from the command line: refused writes name the fix, `toka status` and `toka
doctor` say so, `toka verify` exits 5, and `toka admin recover` gets the log going again, keeping
the damaged files and saying what it saved and lost (exit 5 when events were lost)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from cli_support import assert_error, home, invoke, invoke_json, toka
from damage import append_and_die, corrupt_table, truncate_wal

from daemon.paths import resolve_paths


@pytest.fixture(autouse=True)
def no_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    """No sqlite3 shell: recovery reads row by row, as on a machine without one."""
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))


def recorded(count: int) -> None:
    for n in range(count):
        result = invoke("record", f"s{n % 3}", "message", f'{{"n": {n}}}', "--json")
        assert result.exit_code == 0, result.stderr


def test_a_damaged_database_is_named_everywhere_until_recovered(toka_home: Path) -> None:
    recorded(12)
    assert invoke("daemon", "stop").exit_code == 0
    corrupt_table(resolve_paths().database, "sqlite_autoindex_events_1")  # the ids' index, which appends read

    refused = toka("record", "s1", "message", '{"n": "more"}')
    assert refused.returncode == 5
    assert "takes no more writes" in assert_error(refused.stderr, contains="is damaged")
    assert "toka admin recover" in refused.stderr
    status = invoke_json("status")
    assert status["damaged"] is not None and "malformed" in status["damaged"]["reason"]
    assert "DAMAGED" in toka("status").stdout
    doctor = invoke_json("doctor", exit_code=1)
    [database] = [check for check in doctor["checks"] if check["name"] == "database"]
    assert (database["status"], database["fix"]) == ("problem", "toka admin recover")
    assert invoke("verify").exit_code == 5

    recovery = invoke_json("admin", "recover")

    assert recovery["stopped"] == status["pid"]
    assert (recovery["saved"]["events"], recovery["lost"]["events"], recovery["sessions"]) == (12, 0, 3)
    assert recovery["database"] == str(home() / "toka.db")
    assert Path(recovery["kept_as"]).exists() and Path(recovery["kept_as"]).parent == home()
    status = invoke_json("status")  # a new daemon, on the new database
    assert (status["damaged"], status["events"]) == (None, 12)
    assert invoke("record", "s1", "message", '{"n": "more"}').exit_code == 0
    assert invoke_json("verify")["ok"] is True


def test_recovering_a_log_that_lost_its_tail_names_the_seqs_and_exits_5(toka_home: Path) -> None:
    paths = resolve_paths()
    # A daemon's first start, on the empty log, makes the head key; a log that held events before
    # any key would have its signing refused until a reset (docs/tamper-evidence.md).
    assert invoke("status").exit_code == 0 and invoke("daemon", "stop").exit_code == 0
    append_and_die(paths.database, 200)
    truncate_wal(paths.database, 0.5)

    status = invoke_json("status")
    assert status["damaged"] is not None and "the log ends at seq" in status["damaged"]["reason"]

    result = toka("admin", "recover")

    assert result.returncode == 5
    assert "events of the damaged log could not be saved" in assert_error(result.stderr)
    saved = status["events"]
    assert f"lost      {200 - saved} events: seqs {saved + 1}-200" in result.stdout
    assert invoke_json("verify")["ok"] is True


def test_recover_without_a_database_is_not_found(toka_home: Path) -> None:
    result = invoke("admin", "recover")
    assert result.exit_code == 3
    assert_error(result.stderr, contains="no database")


def test_recover_works_on_sqlite_only(toka_home: Path) -> None:
    (toka_home / "config.toml").write_text('[store]\nbackend = "postgres"\nurl = "postgresql://nobody@nowhere/x"\n')
    result = invoke("admin", "recover")
    assert result.exit_code == 2
    assert_error(result.stderr, contains="SQLite")
