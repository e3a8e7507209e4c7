"""Recovery of a damaged database: what reads is saved into a new one, what does not is named, and
the damaged file is kept as it was.

The damage is done to real files (tests/damage.py). Most cases hide the sqlite3 shell, so that
what is tested is the row-by-row salvage every machine has; one case gives it the shell found on
the PATH, whatever its ``.recover`` makes of the file.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, closing
from pathlib import Path

import pytest
from damage import append_and_die, checkpointed, corrupt_table, overwrite_page, truncate_wal
from older_toka import as_older_toka

from store.base import EventQuery
from store.damage import damage_path
from store.errors import NotFound
from store.events import NewEvent, now_us
from store.sqlite.recover import Recovery, recover
from store.sqlite.schema import MIGRATIONS
from store.sqlite.store import SqliteStore
from store.tip import read_tip, tip_path

OpenSqlite = Callable[..., AbstractAsyncContextManager[SqliteStore]]


@pytest.fixture(autouse=True)
def no_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    """No sqlite3 shell on the PATH: the salvage row by row alone (a test may give one back)."""
    monkeypatch.setenv("PATH", "/nonexistent")


def digest_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def a_log(db_path: Path, open_sqlite: OpenSqlite, events: int = 600, large: bool = False) -> list[str]:
    """``events`` events in three sessions, each with a payload of its own (in its row, or in
    blobs when ``large``); their ids."""
    repeat = 150 if large else 8  # "line 599 " * 150 is over INLINE_BELOW
    async with open_sqlite(db_path) as store:
        for start in range(0, events, 50):
            batch = range(start, min(start + 50, events))
            await store.append(
                [NewEvent(f"s{n % 3}", "message", {"n": n, "text": f"line {n} " * repeat}) for n in batch]
            )
        return [e.id for e in await store.query(EventQuery())]


def leaf_pages(db_path: Path, table: str) -> list[int]:
    with closing(sqlite3.connect(db_path)) as db:
        try:
            rows = db.execute(
                "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno", (table,)
            )
            return [row[0] for row in rows]
        except sqlite3.OperationalError:
            pytest.skip("this SQLite has no dbstat table to find a table's pages with")


def kept_files(recovery: Recovery) -> Path:
    kept = Path(recovery.kept_as)
    assert kept.exists()
    return kept


async def test_a_sound_database_is_copied_whole(db_path: Path, open_sqlite: OpenSqlite) -> None:
    ids = await a_log(db_path, open_sqlite, 120)
    async with open_sqlite(db_path) as store:
        sessions = await store.sessions()
    before = digest_of(db_path)

    recovery = recover(db_path)

    assert (recovery.salvage.events, recovery.salvage.lost_seqs, recovery.sessions) == (120, 0, 3)
    assert recovery.check == ("ok",) and recovery.methods == ["rows"]
    assert digest_of(kept_files(recovery)) == before
    async with open_sqlite(db_path) as store:
        assert [e.id for e in await store.query(EventQuery())] == ids
        assert await store.sessions() == sessions
        assert (await store.check_database()).merged(await store.verify()).ok
        [added] = await store.append([NewEvent("s1", "message", {"n": "after"})])
    assert added.event.seq == 121 and added.event.parents == (ids[-2],)  # s1's last was seq 119


async def test_payloads_are_saved_where_they_were_kept(db_path: Path, open_sqlite: OpenSqlite) -> None:
    small, large = {"n": 1}, {"text": "line of tool output\n" * 100}
    async with open_sqlite(db_path) as store:
        await store.append([NewEvent("s", "message", small), NewEvent("s", "tool.result", large)])

    recovery = recover(db_path)

    assert (recovery.salvage.events, recovery.salvage.payloads, recovery.salvage.payload_lost) == (2, 2, 0)
    with closing(sqlite3.connect(db_path)) as db:
        inline = [row[0] for row in db.execute("SELECT payload IS NOT NULL FROM events ORDER BY seq")]
        in_blobs = db.execute("SELECT count(*) FROM blobs").fetchone()[0]
    assert (inline, in_blobs) == ([1, 0], 1)
    async with open_sqlite(db_path) as store:
        assert [e.payload for e in await store.query(EventQuery())] == [small, large]
        assert (await store.verify()).ok


async def test_a_database_from_before_payloads_in_rows_is_recovered(
    db_path: Path, open_sqlite: OpenSqlite, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as old_toka:  # events without a payload column, every payload in blobs
        as_older_toka(old_toka, len(MIGRATIONS) - 1)
        async with open_sqlite(db_path) as store:
            await store.append([NewEvent("s", "message", {"n": n}) for n in range(3)])

    recovery = recover(db_path)

    assert (recovery.salvage.events, recovery.salvage.payloads, recovery.salvage.payload_lost) == (3, 3, 0)
    async with open_sqlite(db_path) as store:
        assert [e.payload for e in await store.query(EventQuery())] == [{"n": n} for n in range(3)]
        assert (await store.verify()).ok


async def test_a_damaged_page_of_the_log_costs_its_own_rows_only(db_path: Path, open_sqlite: OpenSqlite) -> None:
    ids = await a_log(db_path, open_sqlite)
    checkpointed(db_path)
    pages = leaf_pages(db_path, "events")
    overwrite_page(db_path, pages[len(pages) // 2])
    damaged = digest_of(db_path)

    recovery = recover(db_path)

    salvage = recovery.salvage
    [(first, last)] = salvage.lost_ranges
    assert 0 < salvage.lost_seqs == last - first + 1 < 100  # a page of events: tens of them
    assert salvage.events + salvage.lost_seqs == 600 and salvage.last_seq == 600
    assert digest_of(kept_files(recovery)) == damaged
    async with open_sqlite(db_path) as store:
        saved = [e.id for e in await store.query(EventQuery())]
        report = await store.verify()
        checked = await store.check_database()
    assert saved == ids[: first - 1] + ids[last:]
    assert checked.ok
    # The holes stay visible: the first event after them in each session names a parent not in the log.
    assert {p.what for p in report.problems} == {"chain"}
    assert all(p.seq > last for p in report.problems)


async def test_a_wal_cut_short_is_recovered_to_where_it_ends_and_the_rest_named_lost(db_path: Path) -> None:
    append_and_die(db_path, 300)
    truncate_wal(db_path, 0.5)

    recovery = recover(db_path)

    salvage = recovery.salvage
    [(first, last)] = salvage.lost_ranges
    assert (last, salvage.last_seq) == (300, 300)  # the tip beside the file said how far it went
    assert salvage.events == first - 1 and salvage.lost_seqs == 300 - salvage.events
    store = await SqliteStore.open(db_path)
    try:
        assert (await store.check_database()).merged(await store.verify()).ok
        assert store.damage() is None
        [added] = await store.append([NewEvent("s0", "message", {"n": "after"})])
    finally:
        await store.close()
    assert added.event.seq == first
    tip = read_tip(tip_path(db_path))
    assert tip is not None and tip.seq == first


async def test_events_whose_payload_was_lost_are_not_saved_and_are_counted(
    db_path: Path, open_sqlite: OpenSqlite
) -> None:
    await a_log(db_path, open_sqlite, large=True)  # the payloads in blobs, apart from their events
    checkpointed(db_path)
    pages = leaf_pages(db_path, "blobs")
    overwrite_page(db_path, pages[len(pages) // 2])

    recovery = recover(db_path)

    salvage = recovery.salvage
    assert salvage.payload_lost > 0
    assert salvage.lost_seqs == salvage.payload_lost and salvage.events == 600 - salvage.payload_lost
    async with open_sqlite(db_path) as store:
        assert len(await store.query(EventQuery())) == salvage.events  # every saved event reads


async def test_a_file_whose_schema_cannot_be_read_is_kept_and_a_new_log_started(
    db_path: Path, open_sqlite: OpenSqlite
) -> None:
    await a_log(db_path, open_sqlite, 60)
    checkpointed(db_path)
    overwrite_page(db_path, 1)
    damaged = digest_of(db_path)

    recovery = recover(db_path)

    assert recovery.salvage.events == 0 and recovery.salvage.lost_ranges == [(1, 60)]
    assert any("schema" in note for note in recovery.notes)
    assert digest_of(kept_files(recovery)) == damaged
    async with open_sqlite(db_path) as store:
        assert await store.sessions() == [] and (await store.check_database()).ok


async def test_pruned_events_are_not_lost_and_their_checkpoint_still_verifies(
    db_path: Path, open_sqlite: OpenSqlite
) -> None:
    async with open_sqlite(db_path) as store:
        await store.append([NewEvent("old", "message", {"n": n}) for n in range(10)])
        await store.append([NewEvent("new", "message", {"n": n}) for n in range(5)])
        assert await store.prune("old", before=now_us() + 1) is not None

    recovery = recover(db_path)

    assert (recovery.salvage.tombstones, recovery.salvage.lost_seqs) == (10, 0)
    async with open_sqlite(db_path) as store:
        assert (await store.check_database()).merged(await store.verify()).ok


async def test_recovery_moves_the_damage_record_away_with_the_damaged_file(
    db_path: Path, open_sqlite: OpenSqlite
) -> None:
    await a_log(db_path, open_sqlite, 60)
    corrupt_table(db_path, "events_session_key")
    async with open_sqlite(db_path) as store:
        assert not (await store.check_database()).ok
    assert damage_path(db_path).exists()

    recovery = recover(db_path)

    assert not damage_path(db_path).exists()
    assert damage_path(kept_files(recovery)).exists()
    async with open_sqlite(db_path) as store:
        assert store.damage() is None
        await store.append([NewEvent("s1", "message", {"n": "after"})])


async def test_the_sqlite3_shell_is_tried_when_rows_did_not_read(
    db_path: Path, open_sqlite: OpenSqlite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.undo()  # the PATH as the machine has it
    shell = shutil.which("sqlite3")
    if shell is None:
        pytest.skip("no sqlite3 shell on this machine")
    await a_log(db_path, open_sqlite)
    checkpointed(db_path)
    pages = leaf_pages(db_path, "events")
    overwrite_page(db_path, pages[len(pages) // 2])

    recovery = recover(db_path)

    if "sqlite3 .recover" in recovery.methods:  # a shell whose .recover works on this file
        assert recovery.salvage.events + recovery.salvage.lost_seqs == 600
    else:  # one whose .recover does not (Debian's 3.40 fails even on a sound file)
        assert any(shell in note and "did not work" in note for note in recovery.notes), recovery.notes


async def test_a_shell_that_cannot_run_is_noted(db_path: Path, open_sqlite: OpenSqlite) -> None:
    await a_log(db_path, open_sqlite, 200)
    checkpointed(db_path)
    overwrite_page(db_path, leaf_pages(db_path, "events")[0])

    recovery = recover(db_path, sqlite3_shell="/nonexistent/sqlite3")

    assert recovery.methods == ["rows"]
    assert any("could not run" in note for note in recovery.notes), recovery.notes


def test_there_is_nothing_to_recover_without_a_database(db_path: Path) -> None:
    with pytest.raises(NotFound, match="no database"):
        recover(db_path)
