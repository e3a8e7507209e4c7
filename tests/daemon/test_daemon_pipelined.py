"""Appends sent without waiting for each answer (daemon/server/serving.py): the daemon reads the
next requests while an append commits, commits them in the order they came, answers each in
that order, and answers any other request only after the appends before it, which it sees."""

from __future__ import annotations

from daemon_support import RawConnection, Spawner, wait_for

from daemon.client.appends import append_all
from daemon.client.sync import Client
from daemon.paths import Paths

APPENDS = 40


def append_line(n: int) -> dict[str, object]:
    return {"session": "s", "kind": "note", "payload": {"n": n}}


def test_appends_sent_together_are_committed_and_answered_in_request_order(paths: Paths, spawn: Spawner) -> None:
    spawn()
    with RawConnection(paths) as conn:
        for n in range(APPENDS):
            conn.send_request(n, "events.append", events=[append_line(n)])
        conn.send_request("last", "events.query", session="s", limit=1000)  # sent before any answer is read
        answers = [conn.read() for _ in range(APPENDS)]
        query = conn.read()
    assert [a["id"] for a in answers] == list(range(APPENDS))
    seqs = [a["result"]["events"][0]["seq"] for a in answers]
    assert seqs == sorted(seqs) and len(set(seqs)) == APPENDS
    assert query["id"] == "last"
    events = query["result"]["events"]
    assert [e["payload"]["n"] for e in events] == list(range(APPENDS))  # every append, in order
    assert all(e["parents"] == [p["id"]] for p, e in zip(events, events[1:], strict=False))  # one chain


def test_a_bad_append_among_others_is_answered_in_its_place_and_fails_alone(paths: Paths, spawn: Spawner) -> None:
    spawn()
    with RawConnection(paths) as conn:
        conn.send_request(1, "events.append", events=[append_line(1)])
        conn.send_request(2, "events.append", events=[{"session": "s", "kind": "not a kind!"}])
        conn.send_request(3, "events.append", events=[append_line(3)])
        conn.send_request(4, "status")
        first, bad, third, status = (conn.read() for _ in range(4))
    assert (first["id"], first["ok"]) == (1, True)
    assert (bad["id"], bad["ok"], bad["error"]["code"]) == (2, False, "invalid_event")
    assert (third["id"], third["ok"]) == (3, True)
    assert third["result"]["events"][0]["seq"] == first["result"]["events"][0]["seq"] + 1
    assert (status["id"], status["result"]["events"]) == (4, 2)


def test_appends_of_a_client_that_hangs_up_before_their_answers_commit_in_order(paths: Paths, spawn: Spawner) -> None:
    daemon = spawn()
    with RawConnection(paths) as conn:
        for n in range(APPENDS):
            conn.send_request(n, "events.append", events=[append_line(n)])
    # Gone before any answer: the appends the daemon had read commit all the same, in order (it
    # stops reading once an answer cannot be sent), and the daemon serves on.
    with daemon.client() as client:
        wait_for(lambda: client.call("status")["events"] >= 1, "the first append has committed")
        events = client.call("events.query", session="s", limit=1000)["events"]
        assert [e["payload"]["n"] for e in events] == list(range(len(events)))
        assert client.call("events.append", events=[append_line(-1)])["events"][0]["created"] is True


def test_many_full_append_requests_through_the_client_all_commit(paths: Paths, spawn: Spawner) -> None:
    # Requests of 1,000 events of 3 KB, past what the socket holds, whose answers run to ~100 KB
    # each: with too many sent before their answers are read, the daemon blocks writing answers
    # the client does not read while the client blocks sending a request the daemon does not read.
    spawn()
    text = "x" * 3_000
    events = [{"session": "s", "kind": "note", "key": f"k{n}", "payload": {"n": n, "text": text}} for n in range(8_000)]
    with Client(paths, autostart=False, timeout=20) as client:
        done = append_all(client, events)
        assert [result["created"] for _, result in done] == [True] * len(events)
        assert client.call("status")["events"] == len(events)
