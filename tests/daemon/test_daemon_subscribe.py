"""events.subscribe: committed events stream to the clients that asked, filtered, with no gap."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from daemon_support import RawConnection, Spawned, wait_for

from daemon.client.sync import Client
from store.errors import TokaError


def subscribe(conn: RawConnection, **args: Any) -> None:
    """Send events.subscribe and read its acknowledgement: from then on, nothing is missed."""
    ack = conn.call("sub", "events.subscribe", **args)
    assert ack == {"id": "sub", "ok": True, "result": {"subscribed": True, "session": args.get("session")}}, ack


def read_events(conn: RawConnection, count: int) -> list[dict[str, Any]]:
    events = []
    for _ in range(count):
        message = conn.read()
        assert message["id"] == "sub" and "event" in message, message
        events.append(message["event"])
    return events


def subscribers(client: Client) -> int:
    count: int = client.call("status")["subscribers"]
    return count


MIXED = [
    ("a", "tool.call"),
    ("a", "message"),
    ("b", "tool.call"),
    ("a", "tool.call"),
    ("b", "message"),
    ("a", "tool.result"),
    ("a", "tool.call"),
    ("b", "tool.call"),
]


@pytest.mark.parametrize(
    "filters",
    [{}, {"session": "a"}, {"kinds": ["tool.call"]}, {"session": "a", "kinds": ["tool.call", "tool.result"]}],
    ids=["all", "session", "kinds", "session-and-kinds"],
)
def test_subscriber_gets_new_matching_events_in_order(daemon: Spawned, filters: dict[str, Any]) -> None:
    with daemon.client() as writer:
        before = [writer.record(session, "setup", {}) for session in ("a", "b")]  # sessions exist
        with RawConnection(daemon.paths) as conn:
            subscribe(conn, **filters)
            appended = [writer.record(s, k, {"n": n}) for n, (s, k) in enumerate(MIXED)]
            end = writer.record("a", "tool.call", {"end": True})
            wanted = [
                event["id"]
                for (session, kind), event in zip([*MIXED, ("a", "tool.call")], [*appended, end], strict=True)
                if session == filters.get("session", session) and kind in filters.get("kinds", [kind])
            ]
            got = read_events(conn, len(wanted))
            assert [e["id"] for e in got] == wanted  # the ones asked for, in commit order, nothing else
            assert not {e["id"] for e in before} & {e["id"] for e in got}  # no backlog without after_seq
            assert got[-1]["payload"] == {"end": True}
            assert got[-1] == writer.call("events.get", id=end["id"])  # the full event, as stored
            assert subscribers(writer) == 1
        wait_for(lambda: subscribers(writer) == 0, "the hung-up subscriber is dropped")


def test_client_subscribe_iterates_until_the_client_leaves(daemon: Spawned) -> None:
    received: list[dict[str, Any]] = []
    failures: list[BaseException] = []

    def follow() -> None:
        try:
            with daemon.client(timeout=10) as subscriber:
                for event in subscriber.subscribe(session="s"):
                    received.append(event)
                    if len(received) == 20:
                        break  # and the client closes: it leaves
        except BaseException as exc:  # noqa: BLE001 - surfaced in the test below
            failures.append(exc)

    with daemon.client() as writer:
        writer.record("s", "setup", {})
        thread = threading.Thread(target=follow)
        thread.start()
        wait_for(lambda: subscribers(writer) == 1, "the subscription is registered")
        ids = [writer.record("s", "message", {"n": n})["id"] for n in range(20)]
        thread.join(10)
        assert not failures
        assert [e["id"] for e in received] == ids
        wait_for(lambda: subscribers(writer) == 0, "the subscriber count drops to 0")
        writer.record("s", "message", {})  # committing with nobody listening is fine


def test_subscription_ends_when_the_client_sends_anything(daemon: Spawned) -> None:
    with daemon.client() as writer, RawConnection(daemon.paths) as conn:
        subscribe(conn)
        assert subscribers(writer) == 1
        conn.send(b"stop\n")
        wait_for(lambda: subscribers(writer) == 0, "the stream ends")
        writer.record("s", "message", {})
        # The connection was not closed by the daemon and streams nothing more.
        answer = conn.call(5, "hello")
        assert answer["id"] == 5 and answer["ok"] is True
        # It may subscribe again, and that second stream delivers.
        subscribe(conn)
        second = writer.record("s", "message", {"again": True})
        assert read_events(conn, 1)[0]["id"] == second["id"]


@pytest.mark.parametrize("after_seq", [0, 2500, 5999])
def test_backlog_then_live_events_with_no_gap_and_no_duplicate(daemon: Spawned, after_seq: int) -> None:
    """The backlog (more than one page of 5,000) and live events meet with nothing lost or repeated.

    Writers append to the followed session and to another one throughout the switch-over.
    """
    with daemon.client() as client:
        for start in range(0, 6000, 1000):
            client.append([{"kind": "old", "payload": {"n": n}} for n in range(start, start + 1000)], session="s")
        client.record("other", "old", {})

    stop = threading.Event()
    failures: list[BaseException] = []
    appended: list[int] = []

    def writer(session: str) -> None:
        try:
            with daemon.client() as client:
                while not stop.is_set():
                    appended.append(client.record(session, "new", {})["seq"])
        except TokaError as exc:
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(s,)) for s in ("s", "s", "other")]
    for thread in threads:
        thread.start()
    try:
        wait_for(lambda: len(appended) >= 30, "the writers are under way")
        with RawConnection(daemon.paths) as conn:
            subscribe(conn, session="s", after_seq=after_seq)
            received: list[dict[str, Any]] = []
            live = 0
            while live < 150:  # well past the switch-over from backlog to live events
                received.extend(read_events(conn, 1))
                live += received[-1]["kind"] == "new"
            stop.set()
            for thread in threads:
                thread.join(10)
            with daemon.client() as client:
                end = client.record("s", "end", {})
                while received[-1]["id"] != end["id"]:
                    received.extend(read_events(conn, 1))
                expected = [e["seq"] for e in client.iter_events(session="s", after_seq=after_seq)]
    finally:
        stop.set()
        for thread in threads:
            thread.join(10)
    assert not failures
    seqs = [e["seq"] for e in received]
    assert len(seqs) == len(set(seqs)), "an event was sent twice"
    assert seqs == expected, "the stream is not the stored session after after_seq, in order"
    assert all(e["session"] == "s" for e in received)


def test_subscriber_count_returns_to_zero_after_many_come_and_go(daemon: Spawned) -> None:
    with daemon.client() as writer:
        writer.record("s", "setup", {})
        conns = [RawConnection(daemon.paths) for _ in range(10)]
        for conn in conns:
            subscribe(conn, session="s", after_seq=0)
        assert subscribers(writer) == 10
        for conn in conns:
            assert read_events(conn, 1)[0]["kind"] == "setup"
            conn.close()
        wait_for(lambda: subscribers(writer) == 0, "all subscribers are dropped")
        assert writer.record("s", "message", {})["seq"] == 2  # publishing to nobody is fine


def test_subscribe_with_bad_arguments_gets_an_error(daemon: Spawned) -> None:
    with RawConnection(daemon.paths) as conn:
        answer = conn.call(1, "events.subscribe", kinds="tool.call")
        assert answer["ok"] is False and answer["error"]["code"] == "bad_request"
        answer = conn.call(2, "events.subscribe", after_seq="x")
        assert answer["ok"] is False and answer["error"]["code"] == "bad_request"
        assert conn.call(3, "status")["result"]["subscribers"] == 0


@pytest.mark.slow
def test_subscriber_that_falls_too_far_behind_is_dropped_with_busy(daemon: Spawned) -> None:
    """A subscriber that stops reading costs the daemon a bounded backlog (100,000 events)."""
    with daemon.client() as writer, RawConnection(daemon.paths) as stalled:
        writer.record("s", "setup", {})
        subscribe(stalled, session="s")  # and read nothing while 110,000 events commit
        for _ in range(11):
            writer.append([{"kind": "k", "payload": {}} for _ in range(10_000)], session="s")
        assert writer.call("status")["events"] == 110_001
        seqs = []
        while True:
            message = stalled.read()
            if "event" not in message:
                break
            seqs.append(message["event"]["seq"])
        assert message["id"] == "sub" and message["ok"] is False, message
        assert message["error"]["code"] == "busy" and "after_seq" in message["error"]["hint"]
        assert seqs == list(range(2, 2 + len(seqs)))  # what it did get had no gap
        wait_for(lambda: subscribers(writer) == 0, "the dropped subscriber is gone")
        assert writer.record("s", "k", {})["seq"] == 110_002


def test_sync_client_stays_usable_after_leaving_a_subscription(daemon: Spawned) -> None:
    with daemon.client() as client:
        client.record("s", "message", {"n": 0})
        stream = client.subscribe(session="s", after_seq=0)
        assert next(stream)["payload"] == {"n": 0}
        stream.close()  # the caller stops following
        # The same client answers at once: the stream had a connection of its own.
        assert client.record("s", "message", {"n": 1})["seq"] == 2
        wait_for(lambda: subscribers(client) == 0, "the subscription to end")


def test_following_a_session_that_has_not_started_yet(daemon: Spawned) -> None:
    with daemon.client() as client:
        got: list[dict[str, Any]] = []

        def follow() -> None:
            for event in Client(daemon.paths, autostart=False).subscribe(session="later", after_seq=0):
                got.append(event)
                return

        follower = threading.Thread(target=follow, daemon=True)
        follower.start()
        wait_for(lambda: subscribers(client) == 1, "the follower to subscribe")
        first = client.record("later", "message", {"hello": True})
        follower.join(10)
        assert [e["id"] for e in got] == [first["id"]]
