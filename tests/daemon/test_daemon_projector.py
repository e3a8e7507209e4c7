"""The daemon's projector: the derived tables (search, sessions, usage, the Merkle tree) follow the
commits without a read asking, a read after an append sees it, and a daemon killed before they
caught up loses nothing from them once it starts again."""

from __future__ import annotations

import json
import random
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path

from daemon_support import Spawned, Spawner, wait_for

from daemon.client.sync import Client
from store.errors import DaemonUnavailable, ProtocolError

USAGE = {"model": "claude-opus-4-6", "input_tokens": 10, "output_tokens": 70}


def _reported_calls(client: Client, session: str) -> int:
    """The calls the cost report (the usage projection) counts for ``session``."""
    rows = client.call("report", kind="session")["rows"]
    return sum(row["calls"] for row in rows if row["session"] == session)


def _raw(database: Path, sql: str) -> int:
    with closing(sqlite3.connect(database)) as db:
        return int(db.execute(sql).fetchone()[0] or 0)


def test_the_projector_applies_commits_behind_them_without_a_read(spawn: Spawner) -> None:
    daemon = spawn()
    with daemon.client() as client:
        answered = client.append([{"kind": "message", "payload": {"text": f"quiet{n}"}} for n in range(3)], session="s")
    last = answered[-1]["seq"]
    # Nothing reads the tables: the projector alone brings the tracking record to the last seq.
    wait_for(lambda: _raw(daemon.paths.database, "SELECT seq FROM projected") == last, "the projector applied them")
    assert _raw(daemon.paths.database, "SELECT count(*) FROM search_text") == 3
    assert _raw(daemon.paths.database, "SELECT events FROM sessions WHERE session = 's'") == 3


def test_a_read_right_after_an_append_sees_it(spawn: Spawner) -> None:
    daemon = spawn()
    with daemon.client() as client:
        for n in range(20):
            client.append(
                [
                    {"kind": "message", "payload": {"role": "user", "text": f"fresh{n}"}, "agent": "main"},
                    {"kind": "usage", "payload": USAGE, "agent": "main"},
                ],
                session="s",
            )
            hits = client.call("search", query=f"fresh{n}")["hits"]
            assert [hit["session"] for hit in hits] == ["s"]
            assert client.call("sessions.get", session="s")["events"] == 2 * (n + 1)
            assert _reported_calls(client, "s") == n + 1


def _write_until_killed(daemon: Spawned, session: str, acked: list[int], problems: list[str]) -> None:
    try:
        with daemon.client(timeout=10) as client:
            n = 0
            while True:
                batch = [
                    {"kind": "message", "payload": {"role": "user", "text": f"{session}x{n}"}, "agent": "main"},
                    {"kind": "usage", "payload": USAGE, "agent": "main"},
                ]
                client.append(batch, session=session)
                acked.append(n)
                n += 1
    except (DaemonUnavailable, ProtocolError):
        return
    except Exception as exc:  # noqa: BLE001 - a thread's failure is reported by the test
        problems.append(f"{session}: {exc!r}")


def test_a_daemon_killed_before_the_projector_caught_up_has_whole_tables_after_a_restart(spawn: Spawner) -> None:
    rng = random.Random(20261206)
    daemon = spawn()
    behind = 0  # the kills that left committed events the tables had not applied
    for round_number in range(4):
        sessions = [f"r{round_number}w{i}" for i in range(3)]
        acked: list[list[int]] = [[] for _ in sessions]
        problems: list[str] = []
        threads = [
            threading.Thread(target=_write_until_killed, args=(daemon, s, a, problems))
            for s, a in zip(sessions, acked, strict=True)
        ]
        for thread in threads:
            thread.start()
        wait_for(lambda a=acked, p=problems: all(len(w) > 3 for w in a) or p, "every writer answered")
        time.sleep(rng.uniform(0.0, 0.1))
        daemon.kill()
        for thread in threads:
            thread.join(15)
        assert problems == [], problems
        database = daemon.paths.database
        behind += _raw(database, "SELECT max(seq) FROM events") > _raw(database, "SELECT seq FROM projected")

        daemon = spawn()
        with daemon.client() as client:
            for session, ids in zip(sessions, acked, strict=True):
                stored = list(client.iter_events(session=session))
                assert client.call("sessions.get", session=session)["events"] == len(stored)
                assert _reported_calls(client, session) == sum(1 for e in stored if e["kind"] == "usage") >= len(ids)
                [hit] = client.call("search", query=f"{session}x{ids[-1]}")["hits"]
                assert hit["session"] == session
            report = client.call("verify")
            assert report["ok"] is True, report
    assert behind > 0, "no kill landed before the projector caught up: the case was not exercised"


def test_a_clean_stop_leaves_the_tables_at_the_logs_end_and_signed(spawn: Spawner) -> None:
    daemon = spawn()
    with daemon.client() as client:
        answered = client.append([{"kind": "message", "payload": {"text": f"last{n}"}} for n in range(5)], session="s")
    assert daemon.stop() == 0
    last = answered[-1]["seq"]
    assert _raw(daemon.paths.database, "SELECT seq FROM projected") == last
    assert _raw(daemon.paths.database, "SELECT max(size) FROM merkle") == last
    heads = daemon.paths.heads_file.read_text().splitlines()
    assert json.loads(heads[-1])["size"] == last  # the stop's head covers every event
