"""Appending: atomic batches, lookups by id, prefix and seq, the hash chain and idempotency."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from store.base import EventQuery, EventStore
from store.ephemeral import EphemeralStore
from store.errors import Ambiguous, InvalidEvent, NotFound
from store.events import Event, NewEvent, canonical_json, digest, header_id, now_us, parse_new_event
from store.sqlite.store import SqliteStore

if TYPE_CHECKING:
    from tests.store.conftest import Backend

T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z in microseconds


def ev(session: str, kind: str = "message", **fields: Any) -> NewEvent:
    """A new event for the store to chain and stamp; fields as in NewEvent."""
    payload = fields.pop("payload", {"text": f"{session}/{kind}"})
    return NewEvent(session, kind, payload, **fields)


def copy_of(event: Event) -> NewEvent:
    """The event as an importer hands it back: everything but seq, id and digest."""
    return NewEvent(event.session, event.kind, event.payload, event.agent, event.ts, event.parents, event.key)


async def everything(store: EventStore) -> list[Event]:
    return await store.query(EventQuery())


async def test_append_one_returns_the_created_event(store: EventStore) -> None:
    before = now_us()
    [result] = await store.append([ev("s1", "tool.call", agent="claude", payload={"cmd": "ls"})])
    after = now_us()

    assert result.created
    event = result.event
    assert (event.seq, event.session, event.agent, event.kind) == (1, "s1", "claude", "tool.call")
    assert event.payload == {"cmd": "ls"}
    assert event.key is None
    assert before <= event.ts <= after
    assert await store.get(event.id) == event
    assert await store.get_by_seq(1) == event


async def test_append_batch_assigns_consecutive_seqs_in_batch_order(store: EventStore) -> None:
    await store.append([ev("s0")])
    results = await store.append([ev("s1", payload={"n": n}) for n in range(5)])

    assert [r.created for r in results] == [True] * 5
    assert [r.event.seq for r in results] == [2, 3, 4, 5, 6]
    assert [r.event.payload["n"] for r in results] == list(range(5))
    assert await everything(store) == [(await store.get_by_seq(1))] + [r.event for r in results]


@pytest.mark.parametrize(
    "bad_payload",
    [{"x": float("nan")}, {"x": float("inf")}, {"x": {1, 2}}, {"x": b"bytes"}, {"x": object()}],
    ids=["nan", "inf", "set", "bytes", "object"],
)
async def test_batch_with_an_unserialisable_payload_stores_nothing_of_the_batch(
    store: EventStore, bad_payload: dict[str, Any]
) -> None:
    [first] = await store.append([ev("s1", payload={"n": 0})])
    before = await store.stats()
    batch = [
        ev("s1", payload={"n": 1}),
        ev("s2", payload={"n": 2}, key="k"),
        ev("s1", payload=bad_payload),
        ev("s1", payload={"n": 3}),
    ]

    with pytest.raises(InvalidEvent):
        await store.append(batch)

    assert await everything(store) == [first.event]
    assert await store.stats() == before
    assert [s.session for s in await store.sessions()] == ["s1"]
    # Nothing of the failed batch is left behind in the chain, the keys or the seq counter.
    [again] = await store.append([ev("s1", payload={"n": 1})])
    assert (again.created, again.event.seq, again.event.parents) == (True, 2, (first.event.id,))
    [keyed] = await store.append([ev("s2", payload={"n": 2}, key="k")])
    assert keyed.created


async def test_get_accepts_a_unique_prefix_of_the_id_in_any_case(store: EventStore) -> None:
    results = await store.append([ev("s1", payload={"n": n}) for n in range(20)])
    ids = [r.event.id for r in results]
    target = results[7].event
    prefix = next(target.id[:n] for n in range(1, 65) if sum(i.startswith(target.id[:n]) for i in ids) == 1)

    assert await store.get(prefix) == target
    assert await store.get(target.id) == target
    assert await store.get(target.id[:12].upper()) == target


async def test_get_with_a_prefix_shared_by_two_ids_raises_ambiguous(store: EventStore) -> None:
    # 17 ids over 16 hex digits: at least two share their first character.
    results = await store.append([ev("s1", payload={"n": n}) for n in range(17)])
    ids = [r.event.id for r in results]
    shared = next(c for c in "0123456789abcdef" if sum(i.startswith(c) for i in ids) >= 2)

    with pytest.raises(Ambiguous):
        await store.get(shared)


@pytest.mark.parametrize("kind", ["unused hex prefix", "non-hex", "empty"])
async def test_get_with_no_matching_id_raises_not_found(store: EventStore, kind: str) -> None:
    results = await store.append([ev("s1", payload={"n": n}) for n in range(20)])
    ids = [r.event.id for r in results]
    unused = next(f"{n:04x}" for n in range(65536) if not any(i.startswith(f"{n:04x}") for i in ids))
    prefix = {"unused hex prefix": unused, "non-hex": "zz" + ids[0][2:], "empty": ""}[kind]

    with pytest.raises(NotFound):
        await store.get(prefix)


@pytest.mark.parametrize("seq", [0, -1, 4, 1000])
async def test_get_by_seq_outside_the_log_raises_not_found(store: EventStore, seq: int) -> None:
    await store.append([ev("s1", payload={"n": n}) for n in range(3)])

    with pytest.raises(NotFound):
        await store.get_by_seq(seq)


async def test_each_session_is_a_hash_chain_of_parents(store: EventStore) -> None:
    await store.append([ev("a", payload={"n": 1}), ev("b", payload={"n": 1})])
    await store.append([ev("a", payload={"n": 2})])
    await store.append([ev("b", payload={"n": 2}), ev("a", payload={"n": 3}), ev("b", payload={"n": 3})])

    for session in ("a", "b"):
        events = await store.query(EventQuery(session=session))
        assert [e.payload["n"] for e in events] == [1, 2, 3]
        assert events[0].parents == ()
        assert [e.parents for e in events[1:]] == [(e.id,) for e in events[:-1]]


async def test_id_is_the_hash_of_the_header_and_digest_the_hash_of_the_payload(
    store: EventStore,
) -> None:
    await store.append([ev("s1", "tool.call", agent="codex", payload={"cmd": "ls", "ü": [1, 2.5]})])
    await store.append([ev("s1", "tool.result", ts=T0, key="rec-1", payload={"out": "a\nb"})])

    for event in await everything(store):
        assert event.digest == digest(canonical_json(event.payload))
        assert event.id == header_id(
            event.session, event.agent, event.kind, event.ts, event.parents, event.digest, event.key
        )


async def test_appending_an_existing_key_returns_the_existing_event_and_keeps_the_chain(
    store: EventStore,
) -> None:
    [keyed] = await store.append([ev("s1", key="rec-1", payload={"v": 1})])
    [head] = await store.append([ev("s1", payload={"v": 2})])

    [again] = await store.append([ev("s1", key="rec-1", payload={"v": "changed"})])

    assert not again.created
    assert again.event == keyed.event
    assert len(await everything(store)) == 2
    assert (await store.session("s1")).head == head.event.id
    [next_one] = await store.append([ev("s1", payload={"v": 3})])
    assert (next_one.event.seq, next_one.event.parents) == (3, (head.event.id,))


async def test_a_key_repeated_within_one_batch_is_stored_once(store: EventStore) -> None:
    results = await store.append([ev("s1", key="k", payload={"v": 1}), ev("s1", key="k", payload={"v": 2})])

    assert [r.created for r in results] == [True, False]
    assert results[1].event == results[0].event
    assert len(await everything(store)) == 1


async def test_keys_are_unique_within_a_session_only(store: EventStore) -> None:
    [a] = await store.append([ev("a", key="k")])
    [b] = await store.append([ev("b", key="k")])

    assert a.created and b.created
    assert a.event.id != b.event.id


async def test_a_batch_over_several_sessions_finds_each_held_key_in_its_own_session(store: EventStore) -> None:
    held = await store.append([ev("a", key="k1"), ev("a", key="k2"), ev("b", key="k1")])

    results = await store.append(
        [ev("a", key="k2"), ev("b", key="k2"), ev("a", key="k3"), ev("b", key="k1"), ev("c", key="k1")]
    )

    assert [r.created for r in results] == [False, True, True, False, True]
    assert results[0].event == held[1].event
    assert results[3].event == held[2].event
    assert [r.event.seq for r in results if r.created] == [4, 5, 6]
    assert len(await everything(store)) == 6


async def test_appending_an_event_whose_explicit_parents_give_an_existing_id_returns_it(
    store: EventStore,
) -> None:
    results = await store.append([ev("s1", payload={"n": n}) for n in range(3)])
    before = await store.stats()

    [again] = await store.append([copy_of(results[1].event)])

    assert not again.created
    assert again.event == results[1].event
    assert await store.stats() == before
    assert (await store.session("s1")).head == results[2].event.id


async def _mixed_log(store: EventStore) -> None:
    await store.append(
        [
            ev("main", "message", agent="user", ts=T0, payload={"text": "fix the bug"}),
            ev("main", "tool.call", agent="claude", ts=T0 + 1, key="toolu_1", payload={"cmd": "ls"}),
            ev("side", "message", agent="helper", ts=T0 + 2, payload={"text": "on it"}),
        ]
    )
    await store.append([ev("main", "tool.result", agent="claude", key="toolu_1/r", payload={"out": "a"})])
    await store.append([ev("main", "usage", payload={"input": 10, "output": 2})])
    handoff = (await store.query(EventQuery(session="main", order="desc", limit=1)))[0]
    # A session's first event may point into another session (a handoff continues from it).
    await store.append([ev("next", "lifecycle", parents=(handoff.id,), payload={"state": "ACTIVE"})])
    await store.append([ev("next", "message", agent="claude-2", payload={"text": "continuing"})])


async def test_copying_every_event_into_a_fresh_store_gives_identical_ids(store: EventStore, backend: Backend) -> None:
    await _mixed_log(store)
    original = await everything(store)
    fresh = await backend.open()

    for session in ("main", "side", "next"):
        events = await store.query(EventQuery(session=session))
        results = await fresh.append([copy_of(e) for e in events])
        assert all(r.created for r in results)

    copied = await fresh.query(EventQuery(order="asc"))
    assert sorted(e.id for e in copied) == sorted(e.id for e in original)
    by_id = {e.id: e for e in original}
    for event in copied:
        source = by_id[event.id]
        assert (event.digest, event.parents, event.ts, event.key, event.payload) == (
            source.digest,
            source.parents,
            source.ts,
            source.key,
            source.payload,
        )
    assert (await fresh.verify()).ok


async def test_importing_an_export_again_changes_nothing(store: EventStore, backend: Backend) -> None:
    await _mixed_log(store)
    originals = await everything(store)
    exported = [parse_new_event(e.to_json()) for e in originals]  # as `toka import` reads them
    fresh = await backend.open()
    await fresh.append(exported)
    before, sessions_before = await fresh.stats(), await fresh.sessions()

    again = await fresh.append(exported)
    into_source = await store.append(exported)

    assert not any(r.created for r in again + into_source)
    assert [r.event.id for r in again] == [e.id for e in originals]
    assert await fresh.stats() == before
    assert await fresh.sessions() == sessions_before
    assert len(await everything(store)) == len(originals)


async def test_ids_are_the_same_in_both_backends(db_path: Path) -> None:
    memory = EphemeralStore()
    await _mixed_log(memory)
    events = await everything(memory)
    sqlite = await SqliteStore.open(db_path)
    try:
        results = await sqlite.append([copy_of(e) for e in events])
        assert [r.event for r in results] == events
    finally:
        await sqlite.close()
