"""`toka verify` of a PostgreSQL log from which its owner deleted events with SQL: the daemon's
verify names each seq no event holds, in the middle of the log or cut from its end, with the
session tables rebuilt to match, and the command exits 5 (docs/postgres.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_support import invoke, invoke_json
from daemons import Spawner
from postgres_support import append as append_directly
from postgres_support import execute

from store.events import NewEvent


def on_postgres(toka_home: Path, url: str) -> None:
    (toka_home / "config.toml").write_text(f'[store]\nbackend = "postgres"\nurl = "{url}"\n', encoding="utf-8")


def append(spawn: Spawner, sessions: list[str]) -> None:
    with spawn().client() as client:
        events = [{"session": s, "kind": "message", "payload": {"n": n}} for n, s in enumerate(sessions)]
        client.call("events.append", events=events)


def missing(report: dict[str, Any]) -> list[int]:
    return [p["seq"] for p in report["problems"] if p["what"] == "missing"]


def test_verify_names_51_events_the_owner_deleted(toka_home: Path, spawn: Spawner, postgres_database: str) -> None:
    on_postgres(toka_home, postgres_database)
    append(spawn, [f"s{n % 3}" for n in range(160)])
    assert invoke_json("verify")["ok"]
    execute(postgres_database, "DELETE FROM events WHERE session = 's1' AND seq <= 152")
    invoke_json("admin", "rebuild")

    report = invoke_json("verify", exit_code=5)
    result = invoke("verify")

    assert missing(report) == list(range(2, 153, 3))
    assert report["problem_count"] == 52  # and s1's event at seq 155, whose parent is gone
    assert result.exit_code == 5
    assert "error: the log lost events: 52 problems, the first at seq 2" in result.stderr


def test_verify_finds_a_session_tail_cut_from_the_end_of_the_log(
    toka_home: Path, spawn: Spawner, postgres_database: str
) -> None:
    on_postgres(toka_home, postgres_database)
    append(spawn, ["s0", "s1"] * 10 + ["s1"] * 5)  # s1's tail is seqs 21 to 25, the log's end
    execute(postgres_database, "DELETE FROM events WHERE session = 's1' AND seq > 18")
    invoke_json("admin", "rebuild")

    report = invoke_json("verify", exit_code=5)

    assert missing(report) == [20, 21, 22, 23, 24, 25]
    assert report["problem_count"] == 6


def test_the_daemons_signed_heads_find_a_log_its_owner_cut_consistently(
    toka_home: Path, spawn: Spawner, postgres_database: str
) -> None:
    on_postgres(toka_home, postgres_database)
    append(spawn, ["s0", "s1"] * 10 + ["s1"] * 5)
    signed = invoke_json("verify")
    assert signed["ok"] and signed["heads"]["covered"] == 25
    # s1's tail cut off, and everything in the database made to agree: no hole, chain or head is off.
    execute(
        postgres_database,
        "DELETE FROM events WHERE seq > 18",
        "UPDATE log_end SET seq = 18, id = (SELECT id FROM events WHERE seq = 18)",
    )
    invoke_json("admin", "rebuild")

    report = invoke_json("verify", exit_code=5)

    [problem] = report["problems"]
    assert (problem["seq"], problem["what"]) == (19, "truncated")
    assert "seqs 19 to 25 are gone" in problem["detail"]


def test_heads_signed_before_a_restart_find_events_replaced_while_the_daemon_was_down(
    toka_home: Path, spawn: Spawner, postgres_database: str
) -> None:
    on_postgres(toka_home, postgres_database)
    daemon = spawn()
    with daemon.client() as client:
        client.call(
            "events.append", events=[{"session": "s", "kind": "message", "payload": {"n": n}} for n in range(8)]
        )
    assert daemon.stop() == 0  # a clean stop signs the log to its end
    execute(
        postgres_database,
        "DELETE FROM events WHERE seq > 5",
        "UPDATE log_end SET seq = 5, id = (SELECT id FROM events WHERE seq = 5)",
    )
    with spawn().client() as client:  # its tree is read from the log as it is now
        client.call("events.append", events=[{"session": "s", "kind": "note", "payload": {"n": n}} for n in range(4)])
        report = client.call("verify")

    assert not report["ok"]
    [problem] = report["problems"]
    # The head of 8 events the first daemon signed at its stop no longer holds; the second
    # daemon's own head, signed over the log as it found it, does.
    assert (problem["seq"], problem["what"]) == (1, "signed")
    assert "seqs 1 to 8 are not what the head signed at" in problem["detail"]
    assert "deleted and the events after it renumbered" in problem["detail"]
    assert (report["heads"]["heads"], report["heads"]["matched"]) == (2, 1)


def test_proofs_are_refused_with_a_hint_as_no_tree_is_stored(
    toka_home: Path, spawn: Spawner, postgres_database: str
) -> None:
    on_postgres(toka_home, postgres_database)
    with spawn().client() as client:
        [event] = client.call("events.append", events=[{"session": "s", "kind": "message", "payload": {}}])["events"]
    assert invoke_json("verify")["heads"]["covered"] == 1  # signed: a head of size 1 exists

    for args in (("proof", event["id"]), ("verify", "--since-head", "1")):
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.stdout, result.stderr)
        assert "keeps no stored Merkle tree, which proofs are made from" in result.stderr
        assert "hint: `toka verify` checks it against this daemon's signed heads" in result.stderr


def test_a_daemon_moved_from_its_sqlite_log_to_a_shared_one_keeps_the_heads_of_each_apart(
    toka_home: Path, spawn: Spawner, postgres_database: str
) -> None:
    append_directly(postgres_database, *[NewEvent("other-machine", "message", {"n": n}) for n in range(3)])
    on_sqlite = spawn()
    with on_sqlite.client() as client:
        client.call(
            "events.append", events=[{"session": "mine", "kind": "message", "payload": {"n": n}} for n in range(5)]
        )
        assert client.call("verify")["heads"]["covered"] == 5
    assert invoke_json("admin", "copy", "--to", postgres_database)["copied"] == 5  # at seqs 4 to 8 there
    assert on_sqlite.stop() == 0
    on_postgres(toka_home, postgres_database)

    with spawn().client() as client:
        report = client.call("verify")

    assert report["ok"], report["problems"]
    assert report["heads"]["covered"] == 8
    assert [json.loads(line)["size"] for line in (toka_home / "heads.jsonl").read_text().splitlines()] == [5]
    assert (toka_home / "heads.postgres.jsonl").exists()


def test_verify_says_when_the_record_of_the_logs_end_is_gone(
    toka_home: Path, spawn: Spawner, postgres_database: str
) -> None:
    on_postgres(toka_home, postgres_database)
    append(spawn, ["s"] * 3)
    execute(postgres_database, "DELETE FROM log_end")

    result = invoke("verify")

    assert result.exit_code == 5
    assert "error: the log lost the record of its end: 1 problem, the first in the database file" in result.stderr
