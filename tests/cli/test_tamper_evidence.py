"""Tampering that the chain check alone lets through, each found and named by `toka verify`
against the signed tree heads (docs/tamper-evidence.md).

Each test writes a small log through a real daemon, stops it (which signs a head covering every
event), edits the database file with the stdlib sqlite3 module as an attacker with the file
would, and runs `toka verify --json` on a daemon started afresh.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest
from cli_support import home, invoke, invoke_json

from daemon.client.sync import Client
from store.events import canonical_json, digest, header_id, parse_ts

OLD = "2020-01-01T00:00:00Z"  # old enough to prune
ROUNDS = 4  # each round appends one event to a, b and c: a holds seqs 1, 4, 7, 10


@contextmanager
def database() -> Iterator[sqlite3.Connection]:
    with closing(sqlite3.connect(home() / "toka.db")) as db, db:
        yield db


def write_log(rounds: int = ROUNDS, ts: str | None = None) -> None:
    with Client() as client:
        for n in range(rounds):
            for session in ("a", "b", "c"):
                event: dict[str, Any] = {"session": session, "kind": "message", "payload": {"n": n}}
                if ts is not None:
                    event["ts"] = parse_ts(ts) / 1_000_000 + n
                client.append([event])
    stop()


def stop() -> None:
    """Stop the daemon: a clean stop signs a head covering the last event."""
    result = invoke("daemon", "stop")
    assert result.exit_code == 0, result.stderr


def tampered() -> list[dict[str, Any]]:
    """`toka verify --json` after the change: it must fail, with exit code 5; its problems."""
    report = invoke_json("verify", exit_code=5)
    assert not report["ok"]
    return report["problems"]


def named(problems: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    return [(p["seq"], p["session"], p["what"]) for p in problems]


def test_a_clean_log_matches_its_signed_heads() -> None:
    write_log()

    report = invoke_json("verify")

    assert report["ok"] and report["problems"] == []
    assert report["heads"]["valid"] >= 1 and report["heads"]["matched"] == report["heads"]["valid"]
    assert report["heads"]["covered"] == 3 * ROUNDS and report["heads"]["unsigned"] == 0


def test_verify_has_what_was_committed_signed_before_it_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKA_HEAD_INTERVAL_MS", "3600000")  # the signer's own turn would come in an hour
    with Client() as client:
        client.append([{"session": "a", "kind": "message", "payload": {"n": n}} for n in range(3)])

    report = invoke_json("verify")

    assert report["ok"] and report["heads"]["valid"] == 1
    assert report["heads"]["covered"] == 3 and report["heads"]["unsigned"] == 0


def test_verify_of_an_empty_log_says_no_head_is_signed_yet() -> None:
    result = invoke("verify")

    assert result.exit_code == 0, result.stderr
    assert "no signed head yet" in result.stdout and "the latest of" not in result.stdout


def test_a_sessions_tail_deleted_and_the_tables_rebuilt_is_named() -> None:
    write_log()
    with database() as db:
        db.execute("DELETE FROM events WHERE seq IN (7, 10)")
    assert invoke("admin", "rebuild").exit_code == 0
    # The chain check alone sees nothing: session a now ends at seq 4, as its rebuilt row says.
    chain = invoke_json("verify", "a")
    assert chain["ok"]

    assert named(tampered()) == [(7, "", "missing"), (10, "", "missing")]


def test_the_end_of_the_log_cut_off_is_named() -> None:
    write_log()
    with database() as db:
        db.execute("DELETE FROM events WHERE seq > 9")
    (home() / "toka.db-tip").unlink()  # the last commit recorded beside the file goes with it
    assert invoke("admin", "rebuild").exit_code == 0

    problems = tampered()

    assert named(problems) == [(10, "", "truncated")]
    assert "seqs 10 to 12 are gone" in problems[0]["detail"]


def test_the_end_of_the_log_cut_off_is_named_by_the_tip_and_the_heads() -> None:
    write_log()
    with database() as db:
        db.execute("DELETE FROM events WHERE seq > 9")

    report = invoke_json("verify", exit_code=5)

    assert not report["database"]["ok"]  # the recorded tip names it first, and the file is marked damaged
    assert named(report["problems"]) == [(12, "", "truncated"), (10, "", "truncated")]
    assert report["heads"]["covered"] < 3 * ROUNDS


def test_a_whole_session_deleted_with_its_row_is_named() -> None:
    write_log()
    with database() as db:
        for table in ("events", "sessions", "session_agents", "session_kinds"):
            db.execute(f"DELETE FROM {table} WHERE session = 'b'")

    assert named(tampered()) == [(seq, "", "missing") for seq in (2, 5, 8, 11)]


def prune_a() -> str:
    """Prune session a's first three events (the log's are a week apart from the rest)."""
    with Client() as client:
        for n in range(3):
            client.append([{"session": "a", "kind": "message", "payload": {"old": n}, "ts": parse_ts(OLD) / 1e6 + n}])
        for n in range(2):
            client.append([{"session": "b", "kind": "message", "payload": {"new": n}}])
        client.append([{"session": "a", "kind": "message", "payload": {"new": 0}}])
    pruned = invoke_json("prune", "--before", "2021-01-01", "--session", "a")
    assert pruned["sessions"][0]["events"] == 3
    stop()
    return pruned["sessions"][0]["checkpoint"]


def test_pruning_keeps_every_signed_head_provable() -> None:
    prune_a()
    assert invoke("gc").exit_code == 0

    report = invoke_json("verify")

    assert report["ok"] and report["heads"]["matched"] == report["heads"]["valid"] >= 1


def test_a_checkpoints_tombstones_deleted_are_named() -> None:
    checkpoint = prune_a()
    with database() as db:
        db.execute("DELETE FROM pruned")

    problems = tampered()

    assert named(problems) == [(1, "", "missing"), (2, "", "missing"), (3, "a", "replaced")]
    assert problems[2]["id"] == checkpoint and "a checkpoint with no tombstones" in problems[2]["detail"]


def test_a_run_of_events_replaced_by_a_made_up_checkpoint_is_named() -> None:
    write_log()
    with database() as db:
        head = db.execute("SELECT id FROM events WHERE seq = 7").fetchone()[0]
        db.execute("DELETE FROM events WHERE seq IN (1, 4, 7)")
        payload = {"events": 3, "head": head, "replaces": "0" * 64, "first_seq": 1, "last_seq": 7}
        fake = _insert(db, 7, "a", "checkpoint", parse_ts(OLD), (), payload)
    assert invoke("admin", "rebuild").exit_code == 0

    problems = tampered()

    assert named(problems) == [(1, "", "missing"), (4, "", "missing"), (7, "a", "replaced")]
    assert problems[2]["id"] == fake


def _insert(
    db: sqlite3.Connection, seq: int, session: str, kind: str, ts: int, parents: tuple[str, ...], payload: Any
) -> str:
    data = canonical_json(payload)  # small: kept in the event's row, as toka would
    event_id = header_id(session, None, kind, ts, parents, digest(data), None)
    db.execute(
        "INSERT INTO events VALUES (?, ?, ?, NULL, ?, ?, ?, ?, NULL, ?)",
        (seq, event_id, session, kind, ts, ",".join(parents), digest(data), data),
    )
    return event_id


def reseal(db: sqlite3.Connection, session: str, first: int, payload: Any) -> None:
    """Give the event at seq ``first`` a new payload and re-seal it and every later event of its
    session: new digests and ids, parents pointing at the new ids, the session's head moved."""
    rows = db.execute(
        "SELECT seq, agent, kind, ts, parents, key, digest FROM events WHERE session = ? AND seq >= ? ORDER BY seq",
        (session, first),
    ).fetchall()
    renamed: dict[str, str] = {}
    for seq, agent, kind, ts, parents, key, old_digest in rows:
        new_digest = old_digest
        if seq == first:
            data = canonical_json(payload)  # small: kept in the event's row, as toka would
            new_digest = digest(data)
            db.execute("UPDATE events SET payload = ? WHERE seq = ?", (data, seq))
        new_parents = tuple(renamed.get(p, p) for p in parents.split(",") if p)
        new_id = header_id(session, agent, kind, ts, new_parents, new_digest, key)
        old_id = db.execute("SELECT id FROM events WHERE seq = ?", (seq,)).fetchone()[0]
        renamed[old_id] = new_id
        db.execute(
            "UPDATE events SET id = ?, parents = ?, digest = ? WHERE seq = ?",
            (new_id, ",".join(new_parents), new_digest, seq),
        )


def test_an_event_edited_and_resealed_onward_is_named_with_each_event_after_it() -> None:
    write_log()
    with database() as db:
        reseal(db, "a", 4, {"n": "forged"})
    assert invoke("admin", "rebuild").exit_code == 0
    assert invoke_json("verify", "a")["ok"]  # the chain holds: it was re-sealed

    assert named(tampered()) == [(4, "a", "replaced"), (7, "a", "replaced"), (10, "a", "replaced")]


def test_resealing_with_the_stored_tree_rebuilt_too_names_the_range_of_seqs() -> None:
    write_log()
    with database() as db:
        reseal(db, "a", 4, {"n": "forged"})
        db.execute("DELETE FROM merkle")  # the store rebuilds it from the forged log when it opens
    assert invoke("admin", "rebuild").exit_code == 0

    problems = tampered()

    # The daemon will not sign the rebuilt tree (tests/cli/test_signed_history.py).
    assert [p["what"] for p in problems] == ["refused", "signed"]
    assert problems[1]["seq"] <= 4 and "rewritten too" in problems[1]["detail"]


def test_a_forged_head_is_named() -> None:
    write_log()
    heads = home() / "heads.jsonl"
    lines = heads.read_text().splitlines()
    head = json.loads(lines[-1])
    head["root"] = "ab" * 32
    heads.write_text("\n".join([*lines[:-1], json.dumps(head)]) + "\n")

    problems = tampered()

    # The only head it signed is gone, so the daemon signs no more (tests/cli/test_signed_history.py).
    assert [(p["seq"], p["what"]) for p in problems] == [(1, "refused"), (12, "signed")]
    assert "signature does not hold" in problems[1]["detail"]


def test_heads_cut_from_the_heads_file_are_found_in_the_witness(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    witness = tmp_path / "witness.jsonl"
    monkeypatch.setenv("TOKA_WITNESS_PATH", str(witness))
    write_log()
    assert witness.read_text() == (home() / "heads.jsonl").read_text()
    (home() / "heads.jsonl").write_text("")
    with database() as db:
        db.execute("DELETE FROM events WHERE seq > 9")

    problems = tampered()

    assert any(p["what"] == "truncated" and "the witness" in p["detail"] for p in problems)
    assert any(p["seq"] == 10 and "are gone" in p["detail"] for p in problems)
