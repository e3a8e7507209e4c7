"""Errors and exit codes: tampering (5), a corrupt or too-new database and an unusable data dir (4).

Errors are one `error:` line on stderr plus a `hint:` line; `TOKA_DEBUG=1` shows the traceback.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from cli_support import EXAMPLE, assert_error, home, invoke, json_lines, normalise, toka
from stored_payloads import overwrite_payload

from store.errors import DaemonUnavailable

FIFTH = json_lines(EXAMPLE.read_text())[4]
NINTH = json_lines(EXAMPLE.read_text())[8]


def _stop_daemon() -> None:
    result = toka("daemon", "stop")
    logs = home() / "logs" / "daemon.log"
    assert result.returncode == 0, result.stderr + (logs.read_text()[-4000:] if logs.exists() else "")
    assert result.stdout.startswith("stopped the daemon (pid ")


def _sql(statement: str, *params: object) -> None:
    with sqlite3.connect(home() / "toka.db") as db:
        db.execute(statement, params)
    db.close()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_verify_names_an_event_whose_payload_was_changed(example: str) -> None:
    _stop_daemon()
    with closing(sqlite3.connect(home() / "toka.db")) as db, db:
        overwrite_payload(db, 5, b'{"tool":"Write"}')
    result = toka("verify")  # autostarts the daemon again
    assert result.returncode == 5
    first = result.stdout.splitlines()[0]
    assert first == (
        f"FAILED: 1 problem; first at seq 5 (event {FIFTH['id'][:12]}, session {example}): digest:"
        " payload bytes do not hash to the recorded digest"
    )
    assert result.stderr.startswith("error: the log does not match its hashes: 1 problem, the first at seq 5\n")
    report = json.loads(invoke("verify", "--json").stdout)
    # The tree holds ids, and the id did not change: the signed heads still match; the chain
    # check is what names a changed payload.
    heads = report.pop("heads")
    assert heads["valid"] == heads["matched"] == 1 and heads["covered"] == 23
    assert report.pop("database")["found"] == ["ok"]  # the file itself is sound: a changed payload is no damage
    assert normalise(report) == {
        "ok": False,
        "session": None,
        "events": 23,
        "problem_count": 1,
        "problems": [
            {
                "seq": 5,
                "id": "<id>",
                "session": example,
                "what": "digest",
                "detail": "payload bytes do not hash to the recorded digest",
            }
        ],
    }
    assert report["problems"][0]["id"] == FIFTH["id"]
    assert invoke("verify", example, "--json").exit_code == 5


def test_verify_names_an_event_whose_kind_was_changed(example: str) -> None:
    _stop_daemon()
    _sql("UPDATE events SET kind = 'message' WHERE seq = 9")
    result = invoke("verify", example, "--json")
    assert result.exit_code == 5
    report = json.loads(result.stdout)
    assert (report["ok"], report["session"], report["problem_count"]) == (False, example, 1)
    (problem,) = report["problems"]
    assert (problem["seq"], problem["id"], problem["what"]) == (9, NINTH["id"], "id")
    text = invoke("verify")
    assert text.exit_code == 5
    assert f"first at seq 9 (event {NINTH['id'][:12]}" in text.stdout


def test_verify_of_an_untouched_session_passes_beside_a_tampered_one(example: str) -> None:
    assert invoke("record", "clean", "message", "{}").exit_code == 0
    _stop_daemon()
    _sql("UPDATE events SET kind = 'message' WHERE seq = 9")
    assert invoke("verify", "clean").exit_code == 0
    assert invoke("verify").exit_code == 5


def test_corrupt_database_is_left_alone(toka_home: Path) -> None:
    database = toka_home / "toka.db"
    database.write_bytes(b"this is not a database, but it is someone's file\n" * 200)
    before = _sha256(database)
    result = toka("sessions")
    assert result.returncode == 4
    assert result.stdout == ""
    error = assert_error(result.stderr, contains="the daemon exited at start-up")
    assert "is not a readable toka database" in error  # the daemon's own reason, quoted
    assert str(database) in error
    assert _sha256(database) == before
    # The daemon logged why; `toka daemon logs` shows it.
    logs = toka("daemon", "logs")
    assert "is not a readable toka database" in logs.stdout
    assert _sha256(database) == before


def test_database_of_a_newer_toka_is_refused_and_left_alone(toka_home: Path) -> None:
    assert invoke("record", "s", "message", "{}").exit_code == 0
    _stop_daemon()
    _sql("INSERT INTO toka_migrations (name, applied_at) VALUES ('m999_future', '2099-01-01T00:00:00Z')")
    database = toka_home / "toka.db"
    before = _sha256(database)
    result = toka("events", "s")
    assert result.returncode == 4
    error = assert_error(result.stderr)
    assert "newer toka" in error and "m999_future" in error
    assert _sha256(database) == before


@pytest.fixture
def home_inside_a_file(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """TOKA_HOME under a regular file: a data dir that cannot be created, even by root."""
    base = Path(tempfile.mkdtemp(prefix="tkf", dir="/tmp"))
    (base / "file").write_text("a regular file\n")
    monkeypatch.setenv("TOKA_HOME", str(base / "file" / "home"))
    yield base / "file" / "home"
    shutil.rmtree(base, ignore_errors=True)


def test_unusable_data_dir_is_a_one_line_error(home_inside_a_file: Path) -> None:
    result = toka("sessions")
    # 4, daemon unavailable (DESIGN.md): no daemon can run for this data dir.
    assert result.returncode == 4
    assert result.stdout == ""
    error = assert_error(result.stderr, hint=True)
    assert "Not a directory" in error
    assert invoke("status").exit_code == 4


def test_debug_shows_the_traceback(home_inside_a_file: Path) -> None:
    result = toka("sessions", env={"TOKA_DEBUG": "1"})
    assert result.returncode == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert "DaemonUnavailable" in result.stderr
    # In-process, the runner sees the real exception.
    in_process = invoke("sessions", env={"TOKA_DEBUG": "1"})
    assert isinstance(in_process.exception, DaemonUnavailable)


def test_debug_off_hides_the_traceback(home_inside_a_file: Path) -> None:
    result = toka("sessions", env={"TOKA_DEBUG": "0"})
    assert result.returncode == 4
    assert "Traceback" not in result.stderr


def test_usage_errors_from_the_parser_exit_2() -> None:
    for args in (["events"], ["record", "s"], ["no-such-command"], ["events", "s", "--limit", "many"]):
        result = invoke(*args)
        assert result.exit_code == 2, args
        assert result.stdout == ""


def test_exit_codes_are_in_the_help() -> None:
    result = toka("--help")
    assert result.returncode == 0
    assert (
        "Exit codes: 0 ok, 1 failure, 2 usage or config error, 3 not found, 4 daemon unavailable,"
        " 5 integrity failure, 6 conflict (the current state does not allow it)." in " ".join(result.stdout.split())
    )
    assert not (home() / "toka.db").exists()  # the help never starts the daemon
