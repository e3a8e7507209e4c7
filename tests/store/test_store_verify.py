"""verify(): a clean log passes, and a changed byte anywhere is named by event and kind of damage.

The SQLite cases change the file with the stdlib sqlite3 module, as someone editing the database
by hand would, and recompute nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager, closing, contextmanager
from pathlib import Path

import pytest
from stored_payloads import move_to_blobs, overwrite_payload, stored_payload

from store.base import EventQuery, EventStore
from store.ephemeral import EphemeralStore
from store.errors import IntegrityError
from store.events import Event, NewEvent
from store.rows import CODEC_RAW
from store.sqlite.projections import project_sessions
from store.sqlite.store import SqliteStore

OpenSqlite = Callable[..., AbstractAsyncContextManager[SqliteStore]]


@contextmanager
def raw(path: Path) -> Iterator[sqlite3.Connection]:
    """The database file as any SQLite client sees it; commits on the way out."""
    with closing(sqlite3.connect(path)) as db, db:
        yield db


async def write_log(store: EventStore) -> list[Event]:
    """Two interleaved sessions: s1 gets seqs 1, 2, 4, 5, 7, 8 and s2 gets 3, 6, 9."""
    for n in range(3):
        await store.append(
            [
                NewEvent("s1", "tool.call", {"v": 2 * n}, "claude"),
                NewEvent("s1", "tool.result", {"v": 2 * n + 1}, "claude"),
                NewEvent("s2", "message", {"text": f"hello {n}"}, "user"),
            ]
        )
    return await store.query(EventQuery())


async def tampered(db_path: Path, open_sqlite: OpenSqlite, change: Callable[[sqlite3.Connection], None]) -> list[Event]:
    """Write the log, close the store, let ``change`` edit the file; returns the events as written."""
    async with open_sqlite(db_path) as store:
        events = await write_log(store)
    with raw(db_path) as db:
        change(db)
    return events


async def test_verify_passes_on_a_clean_log(store: EventStore) -> None:
    await write_log(store)

    report = await store.verify()

    assert report.ok
    assert (report.session, report.events, report.problems, report.problem_count) == (None, 9, (), 0)


async def test_verify_of_one_session_checks_only_its_events(store: EventStore) -> None:
    await write_log(store)

    s1, s2 = await store.verify("s1"), await store.verify("s2")

    assert s1.ok and s2.ok
    assert (s1.session, s1.events) == ("s1", 6)
    assert (s2.session, s2.events) == ("s2", 3)


async def test_verify_passes_on_chains_that_point_into_other_sessions(store: EventStore) -> None:
    events = await write_log(store)
    await store.append([NewEvent("s3", "lifecycle", {"state": "ACTIVE"}, parents=(events[4].id,))])
    await store.append([NewEvent("s3", "message", {"text": "continuing"})])

    assert (await store.verify()).ok
    assert (await store.verify("s3")).ok


async def test_verify_reports_progress_up_to_total(store: EventStore) -> None:
    await store.append([NewEvent("s1", "message", {"n": n}) for n in range(2500)])
    calls: list[tuple[int, int]] = []

    report = await store.verify(progress=lambda done, total: calls.append((done, total)))

    assert report.ok
    assert calls[-1] == (2500, 2500)
    assert all(total == 2500 for _, total in calls)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
    assert (1000, 2500) in calls and (2000, 2500) in calls


async def test_verify_names_a_tampered_payload_in_memory() -> None:
    store = EphemeralStore()
    events = await write_log(store)

    # An attacker rewriting the stored bytes in place, as the SQLite cases do in the file.
    store._blobs[events[3].digest] = b'{"v":99}'

    report = await store.verify()
    assert not report.ok
    [problem] = report.problems
    assert (problem.seq, problem.id, problem.session, problem.what) == (4, events[3].id, "s1", "digest")


@pytest.mark.parametrize("where", ["inline", "blobs"])
async def test_verify_names_changed_payload_bytes_in_the_file(
    db_path: Path, open_sqlite: OpenSqlite, where: str
) -> None:
    def change(db: sqlite3.Connection) -> None:
        if where == "blobs":
            move_to_blobs(db, 5)  # as a toka before m015 kept it
        assert stored_payload(db, 5) == (where, CODEC_RAW, b'{"v":3}')
        overwrite_payload(db, 5, b'{"v":4}')

    events = await tampered(db_path, open_sqlite, change)

    async with open_sqlite(db_path) as store:
        assert (await store.get_by_seq(5)).payload == {"v": 4}  # reads do not check; verify does
        report = await store.verify()
    assert report.problem_count == 1
    [problem] = report.problems
    assert (problem.seq, problem.id, problem.session, problem.what) == (5, events[4].id, "s1", "digest")


@pytest.mark.parametrize("codec, data", [(1, b"not zlib at all"), (7, b'{"v":3}')], ids=["bad zlib", "unknown codec"])
async def test_verify_names_a_payload_that_cannot_be_decoded(
    db_path: Path, open_sqlite: OpenSqlite, codec: int, data: bytes
) -> None:
    def change(db: sqlite3.Connection) -> None:
        move_to_blobs(db, 5)  # a codec is a blob's: a payload in an event's row is raw
        digest = db.execute("SELECT digest FROM events WHERE seq = 5").fetchone()[0]
        db.execute("UPDATE blobs SET codec = ?, data = ? WHERE digest = ?", (codec, data, digest))

    events = await tampered(db_path, open_sqlite, change)

    async with open_sqlite(db_path) as store:
        report = await store.verify()
    [problem] = report.problems
    assert (problem.seq, problem.id, problem.what) == (5, events[4].id, "payload")


@pytest.mark.parametrize("column, value", [("kind", "tool.called"), ("ts", 1), ("agent", "mallory"), ("key", "k")])
async def test_verify_names_a_changed_header_field(
    db_path: Path, open_sqlite: OpenSqlite, column: str, value: object
) -> None:
    events = await tampered(
        db_path,
        open_sqlite,
        lambda db: db.execute(f"UPDATE events SET {column} = ? WHERE seq = 4", (value,)),
    )

    async with open_sqlite(db_path) as store:
        report = await store.verify()
        by_session = await store.verify("s1")
    [problem] = report.problems
    assert (problem.seq, problem.id, problem.session, problem.what) == (4, events[3].id, "s1", "id")
    assert by_session.problems == report.problems


async def test_verify_names_the_event_after_a_deleted_one(db_path: Path, open_sqlite: OpenSqlite) -> None:
    events = await tampered(db_path, open_sqlite, lambda db: db.execute("DELETE FROM events WHERE seq = 4"))

    async with open_sqlite(db_path) as store:
        report = await store.verify()
    # seq 4 was s1's third event; s1's next one (seq 5) names it as parent.
    [problem] = report.problems
    assert (problem.seq, problem.id, problem.session, problem.what) == (5, events[4].id, "s1", "chain")
    assert events[3].id[:12] in problem.detail
    assert report.events == 8


async def test_verify_names_a_session_whose_table_row_outlived_its_last_event(
    db_path: Path, open_sqlite: OpenSqlite
) -> None:
    # seq 8 is s1's last event; the log's last (seq 9, of s2) stays, so opening sees nothing amiss.
    events = await tampered(db_path, open_sqlite, lambda db: db.execute("DELETE FROM events WHERE seq = 8"))

    async with open_sqlite(db_path) as store:
        report = await store.verify()
        other = await store.verify("s2")
    [problem] = report.problems
    assert (problem.id, problem.session, problem.what) == (events[7].id, "s1", "head")
    assert other.ok


async def test_a_deleted_last_event_is_named_with_the_session_table_rebuilt_over_what_is_left(
    db_path: Path, open_sqlite: OpenSqlite
) -> None:
    def change(db: sqlite3.Connection) -> None:
        db.execute("DELETE FROM events WHERE seq = 9")
        project_sessions(db)  # the table now agrees with what is left: no head to compare

    events = await tampered(db_path, open_sqlite, change)

    async with open_sqlite(db_path) as store:
        chain = await store.verify()
        checked = await store.check_database()
        damage = store.damage()
    assert chain.ok  # what is left is a sound chain: only the tip recorded outside the file tells
    [problem] = checked.problems
    assert (problem.seq, problem.id, problem.what) == (9, events[8].id, "truncated")
    assert "the log ends at seq 8" in problem.detail
    assert checked.merged(chain).problem_count == 1
    assert damage is not None and "seq 9" in damage.reason


async def test_verify_lists_problems_in_log_order_starting_with_the_first(
    db_path: Path, open_sqlite: OpenSqlite
) -> None:
    def change(db: sqlite3.Connection) -> None:
        db.execute("UPDATE events SET ts = ts + 1 WHERE seq = 7")
        db.execute("UPDATE events SET kind = 'message.edited' WHERE seq = 3")

    events = await tampered(db_path, open_sqlite, change)

    async with open_sqlite(db_path) as store:
        report = await store.verify()
        s2 = await store.verify("s2")
        s1 = await store.verify("s1")
    assert report.problem_count == 2
    assert [(p.seq, p.id, p.what) for p in report.problems] == [
        (3, events[2].id, "id"),
        (7, events[6].id, "id"),
    ]
    assert [p.seq for p in s2.problems] == [3]
    assert [p.seq for p in s1.problems] == [7]


async def test_json_answers_refuse_a_payload_that_does_not_match_its_digest(
    db_path: Path, open_sqlite: OpenSqlite
) -> None:
    # query_json splices stored bytes into the answer unparsed, so it checks them first.
    def change(db: sqlite3.Connection) -> None:
        overwrite_payload(db, 5, b'{"v":4')

    await tampered(db_path, open_sqlite, change)
    async with open_sqlite(db_path) as store:
        assert len(await store.query_json(EventQuery(before_seq=5))) == 4  # the events before it read
        with pytest.raises(IntegrityError, match=r"seq 5\) does not match its digest"):
            await store.query_json(EventQuery())
