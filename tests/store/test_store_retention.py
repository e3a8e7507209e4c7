"""Retention: prune replaces a session's old prefix by a checkpoint and the log still verifies;
gc deletes the payloads nothing refers to any more."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from store.base import EventQuery
from store.ephemeral import EphemeralStore
from store.errors import NotFound, UsageError
from store.events import Event, NewEvent
from store.retention import CHECKPOINT, replaced_digest
from store.rows import INLINE_BELOW
from store.search import SearchQuery
from store.sqlite.store import SqliteStore

HOUR = 3_600_000_000
T0 = 1_780_000_000_000_000  # 2026-05-28T20:26:40Z, in UTC microseconds


def _at(hour: int) -> int:
    return T0 + hour * HOUR


async def _session(store: SqliteStore, name: str = "s", hours: int = 10, pad: int = 0) -> list[Event]:
    """``hours`` events an hour apart, each with a word of its own to search for, and a key;
    ``pad`` characters more in each text (INLINE_BELOW of them: payloads stored in blobs)."""
    batch = [
        NewEvent(name, "message", {"text": f"word{n} of {name}" + "." * pad}, "main", _at(n), key=f"{name}:{n}")
        for n in range(hours)
    ]
    return [r.event for r in await store.append(batch)]


async def _events(store: SqliteStore, session: str = "s") -> list[Event]:
    return await store.query(EventQuery(session=session))


async def test_a_pruned_prefix_becomes_one_checkpoint_and_the_log_verifies(sqlite_store: SqliteStore) -> None:
    written = await _session(sqlite_store)
    other = await _session(sqlite_store, "other", 3)

    pruned = await sqlite_store.prune("s", _at(4))

    assert pruned is not None
    assert (pruned.events, pruned.first_seq, pruned.last_seq) == (4, 1, 4)
    assert (pruned.first_ts, pruned.last_ts, pruned.kinds) == (_at(0), _at(3), {"message": 4})
    left = await _events(sqlite_store)
    checkpoint = left[0]
    assert checkpoint.id == pruned.checkpoint and checkpoint.kind == CHECKPOINT and checkpoint.seq == 4
    assert [e.id for e in left[1:]] == [e.id for e in written[4:]]
    assert checkpoint.payload["events"] == 4 and checkpoint.payload["head"] == written[3].id
    assert checkpoint.payload["replaces"] == replaced_digest(e.id for e in written[:4])
    assert checkpoint.payload["before"] == "2026-05-29T00:26:40.000000Z"
    assert [e.id for e in await _events(sqlite_store, "other")] == [e.id for e in other]
    info = await sqlite_store.session("s")
    assert (info.events, info.first_seq, info.head) == (7, 4, written[-1].id)
    assert info.kinds == {"message": 6, CHECKPOINT: 1}
    report = await sqlite_store.verify()
    assert report.ok, report.problems
    assert report.events == 7 + 3


async def test_a_dry_run_says_what_would_go_and_changes_nothing(sqlite_store: SqliteStore) -> None:
    await _session(sqlite_store)
    before = await _events(sqlite_store)

    dry = await sqlite_store.prune("s", _at(4), dry_run=True)

    assert dry is not None and dry.checkpoint is None
    assert (dry.events, dry.first_seq, dry.last_seq) == (4, 1, 4)
    assert await _events(sqlite_store) == before
    done = await sqlite_store.prune("s", _at(4))
    assert done is not None and (done.events, done.first_seq, done.last_seq) == (4, 1, 4)


async def test_only_a_prefix_goes_and_nothing_when_the_first_event_is_new(sqlite_store: SqliteStore) -> None:
    batch = [NewEvent("s", "message", {"n": n}, None, _at(hour)) for n, hour in enumerate((0, 1, 9, 2, 3))]
    written = [r.event for r in await sqlite_store.append(batch)]

    pruned = await sqlite_store.prune("s", _at(5))

    assert pruned is not None and pruned.events == 2  # the old events after the new one stay
    assert [e.id for e in (await _events(sqlite_store))[1:]] == [e.id for e in written[2:]]
    assert await sqlite_store.prune("s", _at(5)) is None  # the checkpoint is first now, then a new event
    assert await sqlite_store.prune("nobody", _at(5)) is None


async def test_pruned_events_stay_held_and_are_not_stored_again(sqlite_store: SqliteStore) -> None:
    await _session(sqlite_store)
    unkeyed = [NewEvent("u", "message", {"n": n}, None, _at(n)) for n in range(3)]
    copied = [r.event for r in await sqlite_store.append(unkeyed)]
    pruned = await sqlite_store.prune("s", _at(4))
    pruned_unkeyed = await sqlite_store.prune("u", _at(2))
    assert pruned is not None and pruned_unkeyed is not None

    by_key = await sqlite_store.append([NewEvent("s", "message", {"text": "again"}, "main", _at(0), key="s:0")])
    first = copied[1]  # as an import of an export hands it over: parents and all
    by_id = await sqlite_store.append([NewEvent("u", "message", first.payload, None, first.ts, first.parents)])

    assert by_key[0].created is False and by_key[0].event.id == pruned.checkpoint
    assert by_id[0].created is False and by_id[0].event.id == pruned_unkeyed.checkpoint
    assert len(await _events(sqlite_store)) == 7


async def test_search_forgets_what_was_pruned(sqlite_store: SqliteStore, db_path: Path) -> None:
    await _session(sqlite_store)
    await sqlite_store.prune("s", _at(4))

    assert await sqlite_store.search(SearchQuery("word2")) == []
    assert [hit.seq for hit in await sqlite_store.search(SearchQuery("word7"))] == [8]
    with closing(sqlite3.connect(db_path)) as db:
        db.execute("INSERT INTO search_index (search_index) VALUES ('integrity-check')")


async def test_pruning_again_folds_the_checkpoint_into_a_new_one(sqlite_store: SqliteStore) -> None:
    written = await _session(sqlite_store)
    first = await sqlite_store.prune("s", _at(3))
    second = await sqlite_store.prune("s", _at(7))

    assert first is not None and second is not None
    assert (second.events, second.first_seq, second.last_seq) == (4, 1, 7)
    assert (second.first_ts, second.last_ts) == (_at(0), _at(6))
    checkpoint = (await _events(sqlite_store))[0]
    assert checkpoint.id == second.checkpoint and checkpoint.payload["events"] == 7
    assert checkpoint.payload["kinds"] == {"message": 7}
    # the first checkpoint is among what the second replaces, in seq order
    ids = [e.id for e in written[:3]] + [first.checkpoint] + [e.id for e in written[3:7]]
    assert checkpoint.payload["replaces"] == replaced_digest(ids)
    report = await sqlite_store.verify()
    assert report.ok, report.problems


async def test_a_whole_session_pruned_keeps_its_checkpoint_and_takes_new_events(sqlite_store: SqliteStore) -> None:
    await _session(sqlite_store, hours=3)
    pruned = await sqlite_store.prune("s", _at(100))
    assert pruned is not None

    info = await sqlite_store.session("s")
    assert (info.events, info.head) == (1, pruned.checkpoint)
    later = await sqlite_store.append([NewEvent("s", "message", {"text": "later"}, None, _at(200))])
    assert later[0].event.parents == (pruned.checkpoint,)
    assert (await sqlite_store.verify("s")).ok


@pytest.mark.parametrize(
    ("change", "what"),
    [
        ("UPDATE pruned SET id = 'f' || substr(id, 2) WHERE seq = 2", "chain"),
        ("DELETE FROM pruned WHERE seq = 1", "chain"),
        ("DELETE FROM events WHERE kind = 'checkpoint'", "chain"),
    ],
)
async def test_tampering_with_what_a_checkpoint_replaced_is_found(
    sqlite_store: SqliteStore, db_path: Path, change: str, what: str
) -> None:
    await _session(sqlite_store)
    await sqlite_store.prune("s", _at(4))
    with closing(sqlite3.connect(db_path)) as db, db:
        db.execute(change)

    report = await sqlite_store.verify()

    assert not report.ok
    assert {p.what for p in report.problems} == {what}


async def test_gc_deletes_the_payloads_no_event_refers_to(sqlite_store: SqliteStore) -> None:
    written = await _session(sqlite_store, pad=INLINE_BELOW)  # small ones go with their events' rows
    kept = written[1].digest
    await sqlite_store.prune("s", _at(4))
    sizes = [len(e.payload["text"]) + len('{"text":""}') for e in written[:4]]

    dry = await sqlite_store.collect_garbage([kept], dry_run=True)
    assert (dry.blobs, dry.bytes) == (3, sizes[0] + sizes[2] + sizes[3])
    assert (await sqlite_store.collect_garbage([kept], dry_run=True)) == dry
    done = await sqlite_store.collect_garbage([kept])
    assert done == dry
    assert (await sqlite_store.collect_garbage([kept])).blobs == 0
    assert (await sqlite_store.payload(kept))[1] == written[1].payload
    with pytest.raises(NotFound, match="no payload"):
        await sqlite_store.payload(written[0].digest)
    await sqlite_store.vacuum()
    assert (await sqlite_store.verify()).ok
    assert (await sqlite_store.stats()).blobs == 6 + 1 + 1  # the events left, the checkpoint, the one kept


async def test_a_prune_takes_the_small_payloads_with_their_events_and_leaves_gc_nothing(
    sqlite_store: SqliteStore, db_path: Path
) -> None:
    written = await _session(sqlite_store)
    pruned = await sqlite_store.prune("s", _at(4))
    assert pruned is not None

    with closing(sqlite3.connect(db_path)) as db:
        inline = dict(db.execute("SELECT id, payload FROM events").fetchall())
        in_blobs = db.execute("SELECT count(*) FROM blobs").fetchone()[0]
    assert sorted(inline) == sorted([e.id for e in written[4:]] + [pruned.checkpoint])
    assert all(payload is not None for payload in inline.values())  # the checkpoint's too
    assert in_blobs == 0
    assert (await sqlite_store.collect_garbage()).blobs == 0
    assert (await sqlite_store.verify()).ok
    assert [e.payload for e in await _events(sqlite_store)][1:] == [e.payload for e in written[4:]]


async def test_the_memory_backend_refuses_to_prune() -> None:
    store = EphemeralStore()
    with pytest.raises(UsageError, match="cannot be pruned"):
        await store.prune("s", _at(1))
    with pytest.raises(UsageError, match="no payloads to collect"):
        await store.collect_garbage()


async def test_events_chained_onto_a_checkpoint_can_be_pruned_in_turn(sqlite_store: SqliteStore) -> None:
    await _session(sqlite_store, hours=3)
    first = await sqlite_store.prune("s", _at(100))
    assert first is not None
    later = [NewEvent("s", "message", {"text": f"later {n}"}, None, _at(200 + n)) for n in range(3)]
    written = [r.event for r in await sqlite_store.append(later)]
    assert written[0].parents == (first.checkpoint,)

    second = await sqlite_store.prune("s", _at(202))

    assert second is not None and (second.events, second.first_seq) == (2, 1)
    left = await _events(sqlite_store)
    assert [e.kind for e in left] == [CHECKPOINT, "message"] and left[1].id == written[2].id
    assert left[0].payload["events"] == 5 and left[0].payload["head"] == written[1].id
    assert (await sqlite_store.verify()).ok
