"""replay(): a session's events in order, up to a seq, read in chunks so memory stays flat."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from store.base import CHUNK, EventQuery, EventStore
from store.events import Event, NewEvent
from store.sqlite.store import SqliteStore

MB = 1024 * 1024


async def replayed(store: EventStore, session: str, to_seq: int | None = None) -> list[Event]:
    return [event async for event in store.replay(session, to_seq)]


async def interleaved(store: EventStore, a: int, b: int) -> None:
    """Session a gets ``a`` events, b gets ``b``; b's are spread evenly between a's."""
    every = max(a // max(b, 1), 1)
    batch: list[NewEvent] = []
    made_b = 0
    for n in range(a):
        batch.append(NewEvent("a", "message", {"n": n}))
        if n % every == 0 and made_b < b:
            batch.append(NewEvent("b", "tool.call", {"n": made_b}))
            made_b += 1
    batch += [NewEvent("b", "tool.call", {"n": n}) for n in range(made_b, b)]
    for start in range(0, len(batch), 1000):
        await store.append(batch[start : start + 1000])


async def test_replay_yields_the_sessions_events_in_seq_order(store: EventStore) -> None:
    await interleaved(store, 30, 10)

    events = await replayed(store, "a")

    assert [e.payload["n"] for e in events] == list(range(30))
    assert events == await store.query(EventQuery(session="a"))
    assert [e.seq for e in events] == sorted(e.seq for e in events)
    assert {e.session for e in events} == {"a"}


async def test_replay_stops_at_to_seq(store: EventStore) -> None:
    await interleaved(store, 30, 10)
    a = await store.query(EventQuery(session="a"))
    b_seqs = [e.seq for e in await store.query(EventQuery(session="b"))]

    assert await replayed(store, "a", a[11].seq) == a[:12]
    # A seq that belongs to another session: everything of a before it.
    cut = b_seqs[5]
    assert await replayed(store, "a", cut) == [e for e in a if e.seq < cut]
    assert await replayed(store, "a", 0) == []
    assert await replayed(store, "a", a[-1].seq + 100) == a


async def test_replay_reads_across_chunk_boundaries(store: EventStore) -> None:
    await interleaved(store, 2 * CHUNK + 345, 500)
    a = await store.query(EventQuery(session="a"))

    assert await replayed(store, "a") == a
    assert await replayed(store, "a", a[CHUNK - 1].seq) == a[:CHUNK]
    assert await replayed(store, "a", a[2 * CHUNK].seq) == a[: 2 * CHUNK + 1]
    assert len(await replayed(store, "b")) == 500


async def test_replay_of_an_unknown_session_yields_nothing(store: EventStore) -> None:
    await interleaved(store, 5, 5)

    assert await replayed(store, "nope") == []


async def _replay_peak(store: SqliteStore, session: str) -> tuple[int, int]:
    """How many events the replay yielded, and the most memory Python held meanwhile."""
    count = last_seq = 0
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        async for event in store.replay(session):
            assert event.seq > last_seq
            count, last_seq = count + 1, event.seq
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return count, peak


async def _holding_peak(store: SqliteStore, session: str) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        events = await store.query(EventQuery(session=session))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert events
    return peak


@pytest.mark.slow
async def test_replay_memory_stays_flat_as_the_session_grows(db_path: Path) -> None:
    store = await SqliteStore.open(db_path)
    try:
        # One payload for all (one blob) keeps the fill quick; every event read back still
        # carries its own decoded copy, which is what a replay that held on to them would keep.
        output = {"tool": "bash", "stdout": "ok\n", "exit": 0}
        # 10 and 100 chunks of a replay (store.base.CHUNK): ten times the events.
        for name, count in (("small", 10_000), ("big", 100_000)):
            for _ in range(0, count, 5000):
                await store.append([NewEvent(name, "tool.result", output) for _ in range(5000)])

        small_count, small_peak = await _replay_peak(store, "small")
        big_count, big_peak = await _replay_peak(store, "big")
        holding_small = await _holding_peak(store, "small")
    finally:
        await store.close()

    assert (small_count, big_count) == (10_000, 100_000)
    assert big_peak < 20 * MB
    # Ten times the events, about the same memory: one chunk at a time, not the session.
    assert big_peak < 2 * small_peak
    # Replaying 100k events takes less than holding a tenth of them.
    assert big_peak < holding_small / 2
