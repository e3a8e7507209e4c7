"""A damaged database file is found, and once found takes no more writes.

The damage is real: the WAL of a process that died mid-work cut short, a page of the file
overwritten with random bytes, as a disk or a careless copy does it (tests/damage.py). What is
checked: the store names it (SQLite's own check, the tip recorded beside the file), refuses every
write from then on (after a restart too), and goes on reading what it can.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
from damage import PAGE_SIZE, append_and_die, checkpointed, corrupt_table, overwrite_page, truncate_wal

from store.base import EventQuery
from store.damage import damage_path
from store.errors import DatabaseDamaged, StoreError
from store.events import NewEvent, now_us
from store.sqlite.store import SqliteStore
from store.tip import read_tip, tip_path

OpenSqlite = Callable[..., AbstractAsyncContextManager[SqliteStore]]


def say(session: str, n: int) -> NewEvent:
    return NewEvent(session, "message", {"n": n, "text": "words " * 20})


async def written(db_path: Path, open_sqlite: OpenSqlite, batches: int = 30) -> None:
    async with open_sqlite(db_path) as store:
        for n in range(batches):
            keyed = NewEvent(f"s{n % 3}", "tool.call", {"n": n}, key=f"call-{n}")
            await store.append([say(f"s{n % 3}", n), keyed])


async def test_the_tip_beside_the_database_follows_each_commit(sqlite_store: SqliteStore, db_path: Path) -> None:
    assert read_tip(tip_path(db_path)) is None
    await sqlite_store.append([say("s", 1), say("s", 2)])
    keyed = NewEvent("t", "message", {"n": 3}, key="k")
    [last] = await sqlite_store.append([keyed])

    tip = read_tip(tip_path(db_path))

    assert tip is not None and (tip.seq, tip.id) == (3, last.event.id)
    assert os.stat(tip_path(db_path)).st_mode & 0o077 == 0
    [again] = await sqlite_store.append([keyed])  # nothing new: the tip stays
    assert read_tip(tip_path(db_path)) == tip and not again.created


@pytest.mark.parametrize("durability", ["normal", "full"])
async def test_a_wal_cut_short_is_named_and_the_database_takes_no_more_writes(
    db_path: Path, open_sqlite: OpenSqlite, durability: str
) -> None:
    append_and_die(db_path, 300, durability)
    truncate_wal(db_path, 0.5)

    async with open_sqlite(db_path, durability) as store:
        kept = len(await store.query(EventQuery()))
        chain = await store.verify()
        checked = await store.check_database()
        with pytest.raises(DatabaseDamaged) as refused:
            await store.append([say("s0", 1)])
    assert 0 < kept < 300  # the WAL lost commits, and SQLite opened what was left without a word
    assert chain.ok  # what is left is a sound chain
    [problem] = checked.problems
    assert (problem.seq, problem.what) == (300, "truncated")
    assert f"the log ends at seq {kept}" in problem.detail
    assert "takes no more writes" in refused.value.message and refused.value.exit_code == 5
    assert refused.value.hint is not None and "toka admin recover" in refused.value.hint


async def test_a_damaged_index_page_fails_sqlites_check_and_refuses_writes(
    db_path: Path, open_sqlite: OpenSqlite
) -> None:
    await written(db_path, open_sqlite)
    corrupt_table(db_path, "events_session_key")  # an index that neither verify nor these appends read

    async with open_sqlite(db_path) as store:
        chain = await store.verify()
        checked = await store.check_database()
        with pytest.raises(DatabaseDamaged):
            await store.append([say("s0", 1)])
        assert len(await store.query(EventQuery(session="s1"))) == 20  # reads go on
    assert chain.ok
    assert checked.check == "quick_check" and checked.found != ("ok",)
    [problem] = checked.problems
    assert problem.what == "database" and "quick_check failed" in problem.detail


async def test_corruption_met_by_any_statement_refuses_writes_from_then_on_and_after_a_restart(
    db_path: Path, open_sqlite: OpenSqlite
) -> None:
    await written(db_path, open_sqlite)
    corrupt_table(db_path, "sqlite_autoindex_events_1")
    before = db_path.read_bytes()

    async with open_sqlite(db_path) as store:
        assert store.damage() is None  # nothing has read the damaged page yet
        with pytest.raises(DatabaseDamaged) as met:  # the insert into the index reads it
            await store.append([say("s0", 1)])
        damage = store.damage()
        with pytest.raises(DatabaseDamaged):
            await store.append([say("new", 1)])
    assert "malformed" in met.value.message
    assert damage is not None and "malformed" in damage.reason
    assert damage_path(db_path).exists()
    assert db_path.read_bytes() == before  # nothing written into it, not even a checkpoint
    async with open_sqlite(db_path) as store:
        assert store.damage() == damage
        with pytest.raises(DatabaseDamaged):
            await store.append([say("s0", 2)])


async def test_verify_deep_runs_sqlites_integrity_check(sqlite_store: SqliteStore) -> None:
    await sqlite_store.append([say("s", 1)])

    quick, deep = await sqlite_store.check_database(), await sqlite_store.check_database(deep=True)

    assert (quick.check, quick.found, quick.ok) == ("quick_check", ("ok",), True)
    assert (deep.check, deep.found, deep.ok) == ("integrity_check", ("ok",), True)
    assert deep.tip is not None and deep.tip.seq == 1


@pytest.mark.parametrize("seed", range(8))
async def test_random_bytes_over_a_page_at_40_percent_never_pass_as_a_sound_log(
    db_path: Path, open_sqlite: OpenSqlite, seed: int
) -> None:
    await written(db_path, open_sqlite, batches=400)
    checkpointed(db_path)
    pages = db_path.stat().st_size // PAGE_SIZE
    page = int(pages * 0.4) + random.Random(seed).randrange(pages // 5)
    overwrite_page(db_path, page, seed)

    try:
        store = await SqliteStore.open(db_path)
    except StoreError as refused:  # the damage is where opening reads
        assert damage_path(db_path).exists() or "not a readable" in refused.message
        return
    try:
        checked = await store.check_database()
        report = checked.merged(await store.verify())
        assert not report.ok, f"page {page} of {pages} overwritten and the log verified"
        with pytest.raises(DatabaseDamaged):
            await store.append([say("s0", 1)])
    finally:
        await store.close()


async def test_a_prune_that_replaced_the_last_event_is_not_taken_for_a_loss(
    db_path: Path, open_sqlite: OpenSqlite
) -> None:
    async with open_sqlite(db_path) as store:
        await store.append([say("old", n) for n in range(5)])
        before = read_tip(tip_path(db_path))
        assert await store.prune("old", before=now_us() + 1) is not None  # all of it: the checkpoint takes seq 5
        after = read_tip(tip_path(db_path))
    assert before is not None and after is not None and after.seq == before.seq and after.id != before.id
    # A kill between the prune's commit and the tip's update leaves the tip naming the pruned event.
    tip_path(db_path).write_bytes(before.line())

    async with open_sqlite(db_path) as store:
        checked = await store.check_database()
        [added] = await store.append([say("new", 1)])
    assert checked.ok and added.created


async def test_a_database_without_a_tip_starts_one_and_an_unreadable_tip_is_reported(
    db_path: Path, open_sqlite: OpenSqlite
) -> None:
    await written(db_path, open_sqlite, batches=2)
    tip_path(db_path).unlink()
    async with open_sqlite(db_path):
        pass
    tip = read_tip(tip_path(db_path))
    assert tip is not None and tip.seq == 4

    tip_path(db_path).write_bytes(b"not a tip\n")
    async with open_sqlite(db_path) as store:
        checked = await store.check_database()
        [added] = await store.append([say("s", 9)])  # the next commit writes it again
    [problem] = checked.problems
    assert problem.what == "database" and "unknown" in problem.detail
    assert read_tip(tip_path(db_path)) is not None and store.damage() is None
    assert added.event.seq == 5
