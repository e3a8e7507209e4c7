"""Two daemons on one PostgreSQL log writing memory, agents and states: a compare-and-set is
decided against the shared log, and a write answers with what it committed, which the daemon
that wrote it reads back at once, whatever the other daemon commits meanwhile."""

from __future__ import annotations

import json
import threading
from typing import Any

import psycopg
import pytest
from daemon_support import wait_for
from postgres_daemons import PgDaemon, Team, Writers, chain_problems, log_rows

from store.errors import Conflict, TokaError
from store.rows import decode_blob

ROUNDS = 20


def _memory_rows(url: str, key: str) -> list[dict[str, Any]]:
    """The payloads of the memory events of ``key`` in the database, read with a connection of
    the test's own."""
    with psycopg.connect(url, connect_timeout=10) as conn:
        rows = conn.execute(
            "SELECT b.codec, b.data FROM events e JOIN blobs b ON b.digest = e.digest"
            " WHERE e.session = 'toka.memory' ORDER BY e.seq"
        ).fetchall()
    payloads = [json.loads(decode_blob(codec, bytes(data))) for codec, data in rows]
    return [payload for payload in payloads if payload.get("key") == key]


def _race(daemons: list[PgDaemon], call: Any) -> list[Any]:
    """``call(client, n)`` from one thread per daemon, released together: each one's answer or error."""
    clients = [daemon.client() for daemon in daemons]
    barrier = threading.Barrier(len(daemons))
    answers: list[Any] = [None] * len(daemons)

    def run(n: int) -> None:
        barrier.wait(30)
        try:
            answers[n] = call(clients[n], n)
        except TokaError as exc:
            answers[n] = exc

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(daemons))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for client in clients:
        client.close()
    return answers


def test_compare_and_set_from_two_daemons_lets_exactly_one_win(team: Team, postgres_database: str) -> None:
    a, b = team(postgres_database, "a").start(), team(postgres_database, "b").start()
    for n in range(ROUNDS):
        key = f"k{n}"
        answers = _race(
            [a, b],
            lambda client, i, key=key: client.call(
                "memory.set", scope="global", key=key, value=f"from-{'ab'[i]}", expect_version=0
            ),
        )
        won = [answer for answer in answers if isinstance(answer, dict)]
        lost = [answer for answer in answers if not isinstance(answer, dict)]
        assert len(won) == 1 and len(lost) == 1, answers
        assert isinstance(lost[0], Conflict), f"round {n}: {lost[0]!r}"
        assert "version 1" in lost[0].message, lost[0].message
        assert won[0]["version"] == 1
        stored = _memory_rows(postgres_database, key)
        assert [row["value"] for row in stored] == [won[0]["value"]], f"round {n}: {stored}"
        for daemon in (a, b):  # each reads the winner's value: the loser, too, right after its conflict
            with daemon.client() as client:
                assert client.call("memory.get", scope="global", key=key)["value"] == won[0]["value"]
    assert chain_problems(log_rows(postgres_database)) == []


def test_a_daemon_reads_its_own_write_while_the_other_writes(team: Team, postgres_database: str) -> None:
    a, b = team(postgres_database, "a").start(), team(postgres_database, "b").start()
    writers = Writers([b], per_daemon=2)
    try:
        writers.wait_for(5)
        stale = []
        with a.client() as client:
            for n in range(ROUNDS * 5):
                written = client.call("memory.set", scope="global", key="mine", value=n)
                assert written["value"] == n and written["version"] == n + 1
                read = client.call("memory.get", scope="global", key="mine")
                if read["value"] != n:
                    stale.append((n, read["value"]))
        assert stale == []
    finally:
        writers.stop()
    assert not writers.failed


def test_spawn_and_state_set_answer_ok_while_the_other_daemon_writes(team: Team, postgres_database: str) -> None:
    a, b = team(postgres_database, "a").start(), team(postgres_database, "b").start()
    writers = Writers([b], per_daemon=2)
    try:
        writers.wait_for(5)
        with a.client() as client:
            for n in range(ROUNDS):
                agent = client.call("agents.spawn", type="worker", trace=f"t{n}")
                assert agent["trace"] == f"t{n}" and agent["version"] == 1, agent
                state = client.call("state.set", machine="agent", entity=f"e{n}", to="READY")
                assert state["state"] == "READY" and state["changed"] is True, state
                assert client.call("state.get", machine="agent", entity=f"e{n}")["state"] == "READY"
    finally:
        writers.stop()
    with psycopg.connect(postgres_database, connect_timeout=10) as conn:
        spawns = conn.execute("SELECT count(*) FROM events WHERE kind = 'agent.spawn'").fetchone()
        changes = conn.execute("SELECT count(*) FROM events WHERE kind = 'state.set'").fetchone()
    assert spawns == (ROUNDS,) and changes == (ROUNDS,)  # each once: answered ok, nothing to retry


def test_state_set_from_two_daemons_moves_an_entity_once(team: Team, postgres_database: str) -> None:
    a, b = team(postgres_database, "a").start(), team(postgres_database, "b").start()
    for n in range(ROUNDS):
        with a.client() as client:
            client.call("state.set", machine="agent", entity=f"e{n}", to="READY")
        # COMPLETED and FAILED are both final but for TERMINATED: whichever commits first, the
        # other cannot follow it.
        answers = _race(
            [a, b],
            lambda client, i, n=n: client.call(
                "state.set", machine="agent", entity=f"e{n}", to=("COMPLETED", "FAILED")[i]
            ),
        )
        won = [answer for answer in answers if isinstance(answer, dict)]
        lost = [answer for answer in answers if not isinstance(answer, dict)]
        assert len(won) == 1 and len(lost) == 1, answers
        assert isinstance(lost[0], Conflict) and "cannot go to" in lost[0].message, f"round {n}: {lost[0]!r}"
        assert won[0]["from"] == "READY" and won[0]["history_len"] == 2, won[0]
        for daemon in (a, b):
            with daemon.client() as client:
                history = client.call("state.history", machine="agent", entity=f"e{n}")
                assert [c["to"] for c in history["changes"]] == ["READY", won[0]["state"]], history


def test_register_and_usage_answer_what_they_did_while_the_other_daemon_writes(
    team: Team, postgres_database: str
) -> None:
    a, b = team(postgres_database, "a").start(), team(postgres_database, "b").start()
    writers = Writers([b], per_daemon=2)
    try:
        writers.wait_for(5)
        with a.client() as client:
            for n in range(ROUNDS):
                machine = client.call(
                    "state.register",
                    name=f"m{n}",
                    states=["open", "done"],
                    initial="open",
                    transitions={"open": ["done"]},
                )
                assert machine["name"] == f"m{n}" and machine["changed"] is True, machine
                agent = client.call("agents.spawn", type="worker", trace=f"u{n}", window=1000)
                reported = client.call("agents.usage", agent=agent["id"], input_tokens=950, output_tokens=1)
                assert reported["state"] == "CRITICAL", reported
    finally:
        writers.stop()


def test_spawns_of_one_trace_from_two_daemons_get_a_version_each(team: Team, postgres_database: str) -> None:
    a, b = team(postgres_database, "a").start(), team(postgres_database, "b").start()
    for n in range(ROUNDS):
        answers = _race([a, b], lambda client, i, n=n: client.call("agents.spawn", type="worker", trace=f"r{n}"))
        assert all(isinstance(answer, dict) for answer in answers), answers
        assert sorted(answer["version"] for answer in answers) == [1, 2], answers
        assert answers[0]["id"] != answers[1]["id"]
    with psycopg.connect(postgres_database, connect_timeout=10) as conn:
        spawns = conn.execute("SELECT count(*) FROM events WHERE kind = 'agent.spawn'").fetchone()
    assert spawns == (2 * ROUNDS,)


def _busy_changes(daemon: PgDaemon) -> list[int]:
    """The seqs of the changes of entity ``busy`` in machine ``agent``, as ``daemon`` holds them."""
    with daemon.client() as client:
        changes = client.call("state.history", machine="agent", entity="busy")["changes"]
    return [change["seq"] for change in changes]


@pytest.mark.slow
def test_a_daemon_starting_while_the_other_writes_applies_each_change_once(team: Team, postgres_database: str) -> None:
    b = team(postgres_database, "b").start()
    stop = threading.Event()
    moves: list[str] = []

    def move() -> None:  # READY and EXECUTING_TASK in turn, as fast as b answers
        with b.client() as client:
            while not stop.is_set():
                to = "EXECUTING_TASK" if len(moves) % 2 else "READY"
                client.call("state.set", machine="agent", entity="busy", to=to)
                moves.append(to)

    mover = threading.Thread(target=move)
    mover.start()

    def moved_on() -> None:
        seen = len(moves)
        wait_for(lambda: len(moves) > seen + 3, "b changes the entity")

    try:
        for n in range(5):  # each start-up's load meets changes committed while it reads
            moved_on()
            a = team(postgres_database, f"a{n}").start()
            moved_on()
            with psycopg.connect(postgres_database, connect_timeout=10) as conn:
                row = conn.execute("SELECT max(seq) FROM events WHERE kind = 'state.set'").fetchone()
            assert row is not None
            wait_for(lambda a=a, last=row[0]: _busy_changes(a)[-1] >= last, "a has read b's changes")
            seqs = _busy_changes(a)
            assert len(seqs) == len(set(seqs)), f"start-up {n}: changes applied twice"
            a.stop()
    finally:
        stop.set()
        mover.join(60)


def test_a_dependency_added_can_be_removed_at_once_while_the_other_daemon_writes(
    team: Team, postgres_database: str
) -> None:
    a, b = team(postgres_database, "a").start(), team(postgres_database, "b").start()
    writers = Writers([b], per_daemon=2)
    try:
        writers.wait_for(5)
        with a.client() as client:
            for n in range(ROUNDS):
                added = client.call("deps.add", node=f"n{n}", needs=["api", "db"])
                assert added["added"] == ["api", "db"] and {"node": f"n{n}", "needs": "db"} in added["edges"]
                assert client.call("deps.remove", node=f"n{n}", needs="db")["removed"] == ["db"]
    finally:
        writers.stop()


def test_plain_sets_from_two_daemons_both_land_one_version_after_the_other(team: Team, postgres_database: str) -> None:
    a, b = team(postgres_database, "a").start(), team(postgres_database, "b").start()
    for n in range(ROUNDS):
        answers = _race(
            [a, b], lambda client, i, n=n: client.call("memory.set", scope="global", key="plain", value=f"{'ab'[i]}{n}")
        )
        assert all(isinstance(answer, dict) for answer in answers), answers
        assert sorted(answer["version"] for answer in answers) == [2 * n + 1, 2 * n + 2], answers
        last = max(answers, key=lambda answer: answer["version"])
        assert [row["value"] for row in _memory_rows(postgres_database, "plain")][-1] == last["value"]
        with last_writer(a, b, last).client() as client:
            assert client.call("memory.get", scope="global", key="plain")["value"] == last["value"]


def last_writer(a: PgDaemon, b: PgDaemon, answer: dict[str, Any]) -> PgDaemon:
    return a if answer["value"].startswith("a") else b
