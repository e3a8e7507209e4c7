"""Crash safety: a daemon killed with SIGKILL mid-append loses no acknowledged event, with either
durability, and never leaves its database looking damaged: neither the appends of writers that
wait for each answer, nor those of a writer with many in flight on one connection, which the
daemon commits in groups and answers together."""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections import deque

import pytest
from daemon_support import Spawned, Spawner, wait_for

from store.errors import DaemonUnavailable, NotFound, ProtocolError

# The suite runs a short form; benchmarks/soak_crash.py runs 100 rounds of 8 writers.
ROUNDS = int(os.environ.get("TOKA_CRASH_ROUNDS", "20"))
WRITERS = int(os.environ.get("TOKA_CRASH_WRITERS", "4"))
REPORT = os.environ.get("TOKA_CRASH_REPORT")  # where to write the figures, when asked
PIPELINE = 32  # single-event appends the pipelined writer keeps sent and unanswered


def write_until_killed(daemon: Spawned, session: str, seed: int, acked: list[str], problems: list[str]) -> None:
    """Append batches of 1-8 events until the daemon dies; ``acked`` gets every id it answered with."""
    rng = random.Random(seed)
    try:
        with daemon.client(timeout=10) as client:
            n = 0
            while True:
                size = rng.randint(1, 8)
                batch = [
                    {"kind": "tool.call", "payload": {"n": n + i, "pad": "z" * rng.randint(0, 600)}}
                    for i in range(size)
                ]
                n += size
                answered = client.append(batch, session=session)
                acked.extend(event["id"] for event in answered)
    except (DaemonUnavailable, ProtocolError):
        return  # the daemon died under us: the batch in flight was never acknowledged
    except Exception as exc:  # noqa: BLE001 - a thread's failure is reported by the test
        problems.append(f"{session}: {exc!r}")


def pipeline_until_killed(daemon: Spawned, session: str, acked: list[str], problems: list[str]) -> None:
    """Single-event appends with PIPELINE of them sent and unanswered, until the daemon dies;
    ``acked`` gets every id it answered with, in the order it answered."""
    try:
        with daemon.client(timeout=10) as client:
            pending: deque[int] = deque()
            n = 0
            while True:
                event = {"kind": "tool.call", "payload": {"n": n}}
                pending.append(client.submit("events.append", session=session, events=[event]))
                n += 1
                if len(pending) >= PIPELINE:
                    answered = client.result(pending.popleft())
                    acked.extend(e["id"] for e in answered["events"])
    except (DaemonUnavailable, ProtocolError):
        return  # the daemon died under us: what was in flight was never acknowledged
    except Exception as exc:  # noqa: BLE001 - a thread's failure is reported by the test
        problems.append(f"{session}: {exc!r}")


@pytest.mark.slow
@pytest.mark.parametrize("durability", ["normal", "full"])
def test_sigkill_during_appends_loses_no_acknowledged_event(spawn: Spawner, durability: str) -> None:
    rng = random.Random(20240601)
    env = {"TOKA_DURABILITY": durability}
    daemon = spawn(env=env)
    assert daemon.status()["durability"] == durability
    total_acked = pipelined_acked = 0
    for round_number in range(ROUNDS):
        acked: list[list[str]] = [[] for _ in range(WRITERS + 1)]
        problems: list[str] = []
        sessions = [f"r{round_number}-w{i}" for i in range(WRITERS)] + [f"r{round_number}-pipelined"]
        threads = [
            threading.Thread(
                target=write_until_killed,
                args=(daemon, sessions[i], rng.randrange(1 << 30), acked[i], problems),
            )
            for i in range(WRITERS)
        ]
        threads.append(threading.Thread(target=pipeline_until_killed, args=(daemon, sessions[-1], acked[-1], problems)))
        for thread in threads:
            thread.start()
        # The kill lands at a random moment once appends are flowing (with durability full on a
        # busy machine the first acknowledgement may take longer than the random delay).
        wait_for(lambda acked=acked, problems=problems: any(acked) or problems, "a writer's first append answered")
        time.sleep(rng.uniform(0.0, 0.2))
        daemon.kill()
        for thread in threads:
            thread.join(15)
        assert not any(t.is_alive() for t in threads), "a writer hung after the daemon died"
        assert problems == [], problems
        assert sum(map(len, acked)) > 0, f"round {round_number}: nothing was appended before the kill"

        daemon = spawn(env=env)  # same data dir; it must clear the dead daemon's socket and pidfile
        with daemon.client() as client:
            for session, ids in zip(sessions, acked, strict=True):
                for event_id in ids:
                    try:
                        client.call("events.get", id=event_id)
                    except NotFound:
                        pytest.fail(f"round {round_number}: acknowledged event {event_id} of {session} is lost")
                if not ids:
                    continue
                # The session holds the acknowledged events in order, then at most what was
                # committed but not yet answered when the daemon died: the one batch in flight, or
                # the pipelined writer's appends in flight.
                stored = [e["id"] for e in client.iter_events(session=session)]
                assert stored[: len(ids)] == ids, f"round {round_number}: {session} differs"
                assert len(stored) - len(ids) <= (PIPELINE if session.endswith("pipelined") else 8)
            report = client.call("verify")
            assert report["ok"] is True, report
            # A kill is no damage: the tip recorded beside the database is never ahead of its log.
            assert report["database"]["tip"] is not None
            assert client.call("status")["damaged"] is None
            total_acked += sum(map(len, acked))
            pipelined_acked += len(acked[-1])
            assert report["events"] >= total_acked
    assert pipelined_acked > 0, "the pipelined writer had nothing acknowledged in any round"
    if REPORT:
        figures = {
            "kills": ROUNDS,
            "writers": WRITERS,
            "durability": durability,
            "acknowledged": total_acked,
            "pipelined_acknowledged": pipelined_acked,
            "lost": 0,
            "verify": "ok",
        }
        with open(REPORT, "w") as out:
            json.dump(figures, out)
