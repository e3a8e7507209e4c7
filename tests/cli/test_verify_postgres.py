"""`toka verify` of a PostgreSQL log from which its owner deleted events with SQL: the daemon's
verify names each seq no event holds, in the middle of the log or cut from its end, with the
session tables rebuilt to match, and the command exits 5 (docs/postgres.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cli_support import invoke, invoke_json
from daemons import Spawner
from postgres_support import execute


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
