"""Group commit: concurrent appends share transactions, and each is answered only once committed."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

from daemon_support import RawConnection, Spawned

from daemon.server.commit import Amend, GroupCommitter
from store.base import AppendResult
from store.errors import TokaError
from store.events import Event, NewEvent
from store.sqlite.store import SqliteStore

WRITERS = 8
APPENDS_EACH = 200
# Every CHECK_EVERY-th append is read back at once through a brand-new connection.
CHECK_EVERY = 20


def run_writers(daemon: Spawned) -> tuple[list[list[dict[str, Any]]], list[str]]:
    acked: list[list[dict[str, Any]]] = [[] for _ in range(WRITERS)]
    problems: list[str] = []
    start = threading.Barrier(WRITERS)

    def writer(index: int) -> None:
        try:
            with daemon.client() as client:
                start.wait()
                for n in range(APPENDS_EACH):
                    event = client.record(f"writer-{index}", "tool.call", {"writer": index, "n": n})
                    acked[index].append(event)
                    if n % CHECK_EVERY == 0:
                        # Answered means committed: a fresh connection must see it right now.
                        with daemon.client() as fresh:
                            seen = fresh.call("events.get", id=event["id"])
                        if seen["seq"] != event["seq"] or seen["payload"] != {"writer": index, "n": n}:
                            problems.append(f"fresh client saw {seen} for {event}")
        except (TokaError, threading.BrokenBarrierError) as exc:
            problems.append(f"writer {index}: {exc!r}")

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(thread.is_alive() for thread in threads), "a writer hung"
    return acked, problems


def test_concurrent_appends_are_all_acknowledged_and_share_commits(daemon: Spawned) -> None:
    acked, problems = run_writers(daemon)
    assert problems == []
    total = WRITERS * APPENDS_EACH
    seqs = [event["seq"] for events in acked for event in events]
    assert len(seqs) == total
    assert len(set(seqs)) == total, "two appends got the same seq"
    assert len({event["id"] for events in acked for event in events}) == total
    assert all(event["created"] for events in acked for event in events)
    for events in acked:  # one writer's appends are committed in the order it made them
        assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)

    with daemon.client() as client:
        status = client.call("status")
        report = client.call("verify")
        for index, events in enumerate(acked):
            stored = list(client.iter_events(session=f"writer-{index}"))
            assert [e["id"] for e in stored] == [e["id"] for e in events]
    assert status["events"] == total
    assert status["sessions"] == WRITERS
    assert report["ok"] is True and report["events"] == total, report
    # Groups were shared: fewer transactions than appends.
    assert 0 < status["commits"] < total, status


def _appends(count: int, pad: int = 0) -> bytes:
    """``count`` append requests of one event each, as one client sends them without waiting."""
    return b"".join(
        json.dumps(
            {
                "id": n,
                "op": "events.append",
                "args": {"event": {"session": "pipe", "kind": "k", "payload": {"n": n, "pad": "x" * pad}}},
            }
        ).encode()
        + b"\n"
        for n in range(count)
    )


def test_pipelined_appends_on_one_connection_are_answered_in_order_and_share_commits(daemon: Spawned) -> None:
    with daemon.client() as client:
        commits_before = client.call("status")["commits"]
    with RawConnection(daemon.paths) as conn:
        conn.send(_appends(300))
        answers = [conn.read() for _ in range(300)]
    assert [a["id"] for a in answers] == list(range(300))
    assert [a["result"]["events"][0]["seq"] for a in answers] == list(range(1, 301))
    with daemon.client() as client:
        commits = client.call("status")["commits"] - commits_before
    # Read together, they are committed together: groups of up to APPENDS_IN_FLIGHT, not one
    # commit each. (When the daemon reads them in pieces, a group is what one read held.)
    assert 0 < commits <= 300 // 8, commits


def test_pipelined_appends_of_large_lines_are_all_answered_in_order(daemon: Spawned) -> None:
    # 12 lines of about 700 KB: past APPEND_BYTES_IN_FLIGHT (4 MiB) after 5 of them, so the
    # connection waits for the oldest before it decodes more (what it holds is not seen from
    # here); all are answered, in order, and stored.
    with RawConnection(daemon.paths) as conn:
        conn.send(_appends(12, pad=700_000))
        answers = [conn.read() for _ in range(12)]
    assert [a["id"] for a in answers] == list(range(12))
    assert all(a["ok"] for a in answers), [a for a in answers if not a["ok"]]
    with daemon.client() as client:
        stored = [e["payload"]["n"] for e in client.iter_events(session="pipe")]
        assert stored == list(range(12))
        assert client.call("verify")["ok"] is True


def test_one_bad_event_does_not_fail_the_appends_committed_with_it(daemon: Spawned) -> None:
    """A group the store rejects is retried request by request: only the bad request fails.

    The bad event's timestamp is far outside what the log can represent, so it fails in the
    store while sealing, after validation let it through; a 5,000-event batch committed first
    makes the good appends queue up behind it and share a group with the bad one.
    """
    big = [{"session": "big", "kind": "k", "payload": {"n": n, "pad": "x" * 300}} for n in range(5000)]
    with RawConnection(daemon.paths) as loader, RawConnection(daemon.paths) as bad:
        good = [RawConnection(daemon.paths) for _ in range(12)]
        try:
            loader.send_request("big", "events.append", events=big)
            time.sleep(0.01)
            bad.send_request("bad", "events.append", event={"session": "bad", "kind": "k", "ts": 1e20})
            for index, conn in enumerate(good):
                conn.send_request(index, "events.append", event={"session": f"good-{index}", "kind": "k"})
            assert loader.read()["ok"] is True
            refused = bad.read()
            answers = [conn.read() for conn in good]
        finally:
            for conn in good:
                conn.close()
    assert refused["ok"] is False, refused
    assert [a["ok"] for a in answers] == [True] * len(good), [a for a in answers if not a["ok"]]
    with daemon.client() as client:
        assert client.call("status")["events"] == 5000 + len(good)
        assert client.call("verify")["ok"] is True


def test_client_keeps_requests_in_flight_and_reads_answers_in_order(daemon: Spawned) -> None:
    with daemon.client() as client:
        sent = [
            client.submit("events.append", events=[{"session": "p", "kind": "k", "payload": {"n": n}}])
            for n in range(3)
        ]
        seqs = [client.result(request_id)["events"][0]["seq"] for request_id in sent]
        assert seqs == [1, 2, 3]
        assert client.call("status")["events"] == 3  # the connection is in step again


def _commit_twice(tmp_path: Path, amend: Amend) -> tuple[list[AppendResult], list[AppendResult], list[Event]]:
    """Append one keyed event twice through a committer with ``amend``: both answers, and what the
    committer reported committed."""

    async def scenario() -> tuple[list[AppendResult], list[AppendResult], list[Event]]:
        store = await SqliteStore.open(tmp_path / "toka.db")
        committed: list[Event] = []
        committer = GroupCommitter(store, committed.extend, amend)
        await committer.start()
        new = NewEvent("s", "note", {"text": "once"}, key="k")
        first = await committer.append([new])
        again = await committer.append([new])
        await committer.stop()
        await store.close()
        return first, again, committed

    return asyncio.run(scenario())


def test_events_an_amend_adds_for_held_keys_are_committed_once(tmp_path: Path) -> None:
    async def amend(held: list[tuple[NewEvent, Event]]) -> list[NewEvent]:
        return [
            NewEvent(stored.session, "note", {"again": new.payload}, key=f"{stored.key}:again") for new, stored in held
        ]

    first, again, committed = _commit_twice(tmp_path, amend)
    assert again[0].created is False and again[0].event.id == first[0].event.id
    assert [(e.kind, e.key, e.payload) for e in committed] == [
        ("note", "k", {"text": "once"}),
        ("note", "k:again", {"again": {"text": "once"}}),
    ]


def test_an_amend_that_fails_fails_no_append(tmp_path: Path) -> None:
    async def amend(held: list[tuple[NewEvent, Event]]) -> list[NewEvent]:
        raise RuntimeError("broken amend")

    first, again, committed = _commit_twice(tmp_path, amend)
    assert first[0].created is True and again[0].created is False
    assert [e.id for e in committed] == [first[0].event.id]


def test_a_failed_append_among_pipelined_ones_is_answered_in_its_place(daemon: Spawned) -> None:
    # The bad event's timestamp fails in the store, while sealing: its group is retried request
    # by request, and its error is answered between the answers of the appends around it.
    requests = [
        {"id": n, "op": "events.append", "args": {"event": {"session": "pipe", "kind": "k", "payload": {"n": n}}}}
        for n in range(20)
    ]
    requests[7]["args"]["event"]["ts"] = 1e20
    with RawConnection(daemon.paths) as conn:
        conn.send(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
        answers = [conn.read() for _ in range(20)]
    assert [a["id"] for a in answers] == list(range(20))
    assert [a["ok"] for a in answers] == [n != 7 for n in range(20)], answers[7]
    with daemon.client() as client:
        assert [e["payload"]["n"] for e in client.iter_events(session="pipe")] == [n for n in range(20) if n != 7]
