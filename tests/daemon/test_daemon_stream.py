"""events.stream: every matching event, page after page, then the count; flat on both sides."""

from __future__ import annotations

from daemon_support import RawConnection, Spawned

from daemon.client.sync import Client

# More than one page (the daemon's pages hold 5,000 events).
MANY = 12_345


def fill(client: Client, session: str, count: int) -> None:
    for start in range(0, count, 2000):
        client.append(
            [
                {"session": session, "kind": "tool.call", "payload": {"n": n}}
                for n in range(start, min(start + 2000, count))
            ]
        )


def test_stream_sends_every_event_in_pages_then_the_count(daemon: Spawned) -> None:
    with daemon.client() as client:
        fill(client, "big", MANY)
        client.record("other", "message", {})
    with RawConnection(daemon.paths) as conn:
        conn.send_request(5, "events.stream", session="big")
        seqs: list[int] = []
        pages = 0
        while True:
            message = conn.read()
            assert message["id"] == 5
            if "ok" in message:
                assert message == {"id": 5, "ok": True, "result": {"events": MANY}}
                break
            pages += 1
            assert len(message["events"]) <= 5000
            seqs += [e["seq"] for e in message["events"]]
        assert pages == 3
        assert seqs == list(range(1, MANY + 1))
        assert conn.call(6, "hello")["ok"] is True  # the connection is usable after the stream


def test_iter_events_honours_limit_order_and_filters(daemon: Spawned) -> None:
    with daemon.client() as client:
        fill(client, "big", MANY)
        client.record("big", "message", {"last": True})
        newest = list(client.iter_events(session="big", order="desc", limit=7001))
        assert [e["seq"] for e in newest] == list(range(MANY + 1, MANY + 1 - 7001, -1))
        messages = list(client.iter_events(session="big", kinds=["message"]))
        assert [e["payload"] for e in messages] == [{"last": True}]
        assert list(client.iter_events(session="big", after_seq=MANY - 2))[0]["seq"] == MANY - 1


def test_a_reader_that_hangs_up_mid_stream_costs_nothing(daemon: Spawned) -> None:
    with daemon.client() as client:
        fill(client, "big", MANY)
        stream = client.iter_events(session="big")
        assert next(stream)["seq"] == 1
        stream.close()  # the caller stops reading: its connection closes
        assert client.record("big", "message", {})["seq"] == MANY + 1
        assert client.call("status")["events"] == MANY + 1


def test_stream_of_an_unknown_session_is_not_found(daemon: Spawned) -> None:
    with RawConnection(daemon.paths) as conn:
        answer = conn.call(1, "events.stream", session="nope")
        assert answer["ok"] is False and answer["error"]["code"] == "not_found"
