"""The daemon signs only a log that extends what its key signed before (docs/tamper-evidence.md,
"What SQLite alone proves").

Each test writes a small log through a real daemon and stops it, changes the data files as
someone without the key would (the database with the stdlib sqlite3 module, the heads file by
hand), and starts a daemon afresh on them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import home, invoke, invoke_json
from test_proofs import documented_check
from test_tamper_evidence import ROUNDS, database, reseal, stop, write_log

from daemon.client.sync import Client


def heads_file() -> Path:
    return home() / "heads.jsonl"


def refusal(report: dict[str, Any]) -> dict[str, Any]:
    """The problem `toka verify --json` reports for a daemon that refuses to sign."""
    found = [p for p in report["problems"] if p["what"] == "refused"]
    assert len(found) == 1, report["problems"]
    return found[0]


def forge_resealed_log_and_drop_the_heads() -> str:
    """Session a re-sealed from seq 4, the stored tree emptied (the store rebuilds it from the
    forged events), the heads file deleted; the forged event's id."""
    write_log()
    with database() as db:
        reseal(db, "a", 4, {"n": "forged"})
        db.execute("DELETE FROM merkle")
        forged = str(db.execute("SELECT id FROM events WHERE seq = 4").fetchone()[0])
    heads_file().unlink()
    assert invoke("admin", "rebuild").exit_code == 0  # the sessions' heads moved to the forged events
    return forged


def test_a_resealed_log_with_its_tree_and_heads_deleted_is_not_signed() -> None:
    forged = forge_resealed_log_and_drop_the_heads()

    report = invoke_json("verify", exit_code=5)
    proof = invoke("proof", forged)

    assert "heads were deleted" in refusal(report)["detail"]
    assert report["heads"]["valid"] == 0 and not heads_file().exists()
    assert proof.exit_code == 5 and "refuses to sign" in proof.stderr and "--reset --yes" in proof.stderr
    line = invoke("verify")
    assert line.exit_code == 5 and "refuses to sign" in line.stdout


def test_a_log_cut_short_and_its_tip_rewritten_with_the_heads_deleted_is_not_signed() -> None:
    write_log()
    with database() as db:
        db.execute("DELETE FROM events WHERE seq > 9")
        db.execute("DELETE FROM merkle")
    (home() / "toka.db-tip").unlink()
    heads_file().unlink()
    assert invoke("admin", "rebuild").exit_code == 0
    with Client() as client:  # new events on the cut log: still nothing is signed
        client.append([{"session": "d", "kind": "message", "payload": {}}])

    report = invoke_json("verify", exit_code=5)

    assert "12 events" in refusal(report)["detail"]
    assert not heads_file().exists()


def test_heads_cut_from_the_end_of_the_heads_file_stop_signing() -> None:
    write_log(rounds=1)
    write_log(rounds=1)  # a second daemon run: a second head, of 6 events
    lines = heads_file().read_text().splitlines()
    assert [json.loads(line)["size"] for line in lines] == [3, 6]
    with database() as db:
        reseal(db, "b", 5, {"n": "forged"})
        db.execute("DELETE FROM merkle")
    heads_file().write_text(lines[0] + "\n")

    report = invoke_json("verify", exit_code=5)

    assert "covered 6 events" in refusal(report)["detail"] and "end at 3" in refusal(report)["detail"]
    assert len(heads_file().read_text().splitlines()) == 1


def test_a_stored_tree_rebuilt_from_a_resealed_log_is_not_signed_over() -> None:
    write_log()
    with database() as db:
        reseal(db, "a", 4, {"n": "forged"})
        db.execute("DELETE FROM merkle")
    assert invoke("admin", "rebuild").exit_code == 0
    with Client() as client:
        client.append([{"session": "d", "kind": "message", "payload": {}}])

    report = invoke_json("verify", exit_code=5)

    assert "no longer hashes to" in refusal(report)["detail"]
    assert [json.loads(line)["size"] for line in heads_file().read_text().splitlines()] == [3 * ROUNDS]


def test_status_and_doctor_say_signing_is_refused() -> None:
    forge_resealed_log_and_drop_the_heads()

    status = invoke_json("status")
    shown = invoke("status")
    doctor = invoke_json("doctor", exit_code=1)

    assert "heads were deleted" in status["heads"]["refused"]
    assert "REFUSED" in shown.stdout
    check = next(c for c in doctor["checks"] if c["name"] == "heads")
    assert check["status"] == "problem" and "heads were deleted" in check["detail"]
    assert "toka heads --reset --yes" in check["fix"]


def test_a_reset_needs_yes_then_signs_the_log_as_it_is_and_keeps_what_it_moved() -> None:
    forge_resealed_log_and_drop_the_heads()
    invoke_json("verify", exit_code=5)

    unconfirmed = invoke("heads", "--reset")
    reset = invoke_json("heads", "--reset", "--yes")
    report = invoke_json("verify")

    assert unconfirmed.exit_code == 2 and "--yes" in unconfirmed.stderr
    assert reset["refused"] and "heads were deleted" in reset["refused"]
    assert reset["signed_before"] == 3 * ROUNDS and reset["head"]["size"] == 3 * ROUNDS
    history = json.loads((home() / "heads.signed").read_text())
    assert history["resets"][0]["signed_before"] == 3 * ROUNDS and history["size"] == 3 * ROUNDS
    assert report["ok"] and report["heads"]["valid"] == 1


def test_a_first_start_signs_silently_and_a_reset_keeps_the_old_heads_file() -> None:
    write_log()
    assert invoke_json("verify")["ok"]
    assert json.loads((home() / "heads.signed").read_text())["size"] == 3 * ROUNDS

    reset = invoke_json("heads", "--reset", "--yes")

    assert reset["refused"] is None and reset["kept_as"] is not None
    assert Path(reset["kept_as"]).read_text().count("\n") == 1
    assert invoke_json("verify")["ok"]


def test_a_forged_last_head_is_reported_and_signing_goes_on_to_the_witness(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    witness = tmp_path / "witness.jsonl"
    monkeypatch.setenv("TOKA_WITNESS_PATH", str(witness))
    write_log()
    good = json.loads(heads_file().read_text().splitlines()[-1])
    with heads_file().open("a") as out:  # a head far ahead of the log, signed by no one
        out.write(json.dumps({**good, "size": 10**9}) + "\n")
    with Client() as client:
        client.append([{"session": "d", "kind": "message", "payload": {}}])

    status = invoke_json("status")
    stop()

    sizes = [json.loads(line)["size"] for line in heads_file().read_text().splitlines()]
    assert sizes == [3 * ROUNDS, 10**9, 3 * ROUNDS + 1]
    assert json.loads(witness.read_text().splitlines()[-1])["size"] == 3 * ROUNDS + 1
    assert status["heads"]["untrusted"] == 1
    listed = invoke_json("heads")
    assert [h["size"] for h in listed["heads"]] == [3 * ROUNDS, 3 * ROUNDS + 1] and listed["untrusted"] == 1
    problems = invoke_json("verify", exit_code=5)["problems"]
    assert [(p["what"], p["seq"]) for p in problems] == [("signed", 10**9)]
    proof = invoke_json("proof", _last_id())
    documented_check()(proof, _last_id(), invoke_json("heads")["key"])


def _last_id() -> str:
    with Client() as client:
        return str(client.call("events.get", seq=3 * ROUNDS + 1)["id"])
