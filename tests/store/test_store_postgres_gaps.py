"""Events deleted from a PostgreSQL log by whoever owns the database: seqs there are dense and the
log's end is recorded with each append, so `verify` of the whole log names every seq no event
holds, in the middle of the log or at its end, even when the session tables were rebuilt to match
(docs/postgres.md, "What verify proves")."""

from __future__ import annotations

import asyncio
import secrets
import urllib.parse
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from store.base import MAX_PROBLEMS
from store.events import NewEvent
from store.merkle import SignedRoot
from store.postgres.store import PostgresStore


@pytest.fixture
def store(postgres_database: str, loop: asyncio.AbstractEventLoop) -> Iterator[PostgresStore]:
    opened = loop.run_until_complete(PostgresStore.open(postgres_database))
    yield opened
    loop.run_until_complete(opened.close())


async def change(url: str, *statements: str) -> None:
    """Run ``statements`` as the database's owner would, in one committed transaction."""
    async with await psycopg.AsyncConnection.connect(url) as conn:
        for statement in statements:
            await conn.execute(statement)


async def write_log(store: PostgresStore, events: int) -> None:
    """``events`` events, three sessions taking turns: s0 gets seqs 1, 4, 7, ..."""
    await store.append([NewEvent(f"s{n % 3}", "message", {"n": n}) for n in range(events)])


def as_user(url: str, user: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return parts._replace(netloc=f"{user}@{parts.netloc.rsplit('@', 1)[-1]}").geturl()


def missing(report: Any) -> list[int]:
    return [p.seq for p in report.problems if p.what == "missing"]


async def test_verify_names_each_of_51_deleted_events(store: PostgresStore, postgres_database: str) -> None:
    await write_log(store, 160)
    # Every event of s1 from seq 2 to 152, its session row rebuilt to match what is left.
    await change(postgres_database, "DELETE FROM events WHERE session = 's1' AND seq <= 152")
    assert await store.rebuild_projections() == 3

    report = await store.verify()

    assert not report.ok
    assert missing(report) == list(range(2, 153, 3))
    assert len(missing(report)) == 51
    # and s1's next event names a parent the log lacks
    assert [(p.seq, p.what) for p in report.problems if p.what != "missing"] == [(155, "chain")]
    assert all(p.id == "" and p.session == "" for p in report.problems if p.what == "missing")


async def test_verify_counts_every_deleted_seq_and_lists_at_most_the_limit(
    store: PostgresStore, postgres_database: str
) -> None:
    await write_log(store, 300)
    await change(postgres_database, "DELETE FROM events WHERE seq BETWEEN 100 AND 250")
    await store.rebuild_projections()

    report = await store.verify()

    assert missing(report) == list(range(100, 100 + MAX_PROBLEMS))
    assert len(report.problems) == MAX_PROBLEMS
    assert report.problem_count >= 151


async def test_verify_finds_a_session_tail_cut_from_the_end_of_the_log(
    store: PostgresStore, postgres_database: str
) -> None:
    await write_log(store, 90)
    await store.append([NewEvent("s1", "message", {"n": n}) for n in range(51)])  # seqs 91 to 141
    # The whole tail of s1 is the log's end: no seq after it shows the hole.
    await change(postgres_database, "DELETE FROM events WHERE seq > 90")
    await store.rebuild_projections()

    report = await store.verify()

    assert not report.ok
    assert missing(report) == list(range(91, 142))
    assert report.problem_count == 51


async def test_a_deleted_end_of_the_log_keeps_its_seqs(store: PostgresStore, postgres_database: str) -> None:
    await write_log(store, 10)
    await change(postgres_database, "DELETE FROM events WHERE seq > 7")
    await store.rebuild_projections()

    [appended] = await store.append([NewEvent("s0", "message", {"n": "after"})])

    # A new event takes no seq a deleted one had, so the hole stays where it was.
    assert appended.event.seq == 11
    assert missing(await store.verify()) == [8, 9, 10]


async def test_verify_reports_the_record_of_the_log_end_deleted(store: PostgresStore, postgres_database: str) -> None:
    await write_log(store, 10)
    await change(postgres_database, "DELETE FROM log_end")

    report = await store.verify()

    [problem] = report.problems
    assert problem.what == "database"
    assert "log_end" in problem.detail


async def test_an_intact_log_verifies_and_a_session_verify_reports_no_holes(
    store: PostgresStore, postgres_database: str
) -> None:
    await write_log(store, 30)
    assert (await store.verify()).ok
    # A session's own seqs are not dense: its verify checks its chain only.
    assert (await store.verify("s1")).ok


async def test_an_upgrade_records_the_end_of_a_log_and_lets_its_appending_role_write_it(
    store: PostgresStore, postgres_database: str
) -> None:
    """A database from before ``log_end``, appended to by a role granted only what that toka
    needed: after the owner's upgrade, the role's daemon appends on, past the recorded end."""
    await write_log(store, 10)
    await store.close()
    role = "toka_gaps_" + secrets.token_hex(4)
    await change(
        postgres_database,
        "DROP TABLE log_end",
        "DROP TABLE projected",  # a step after it
        "DELETE FROM toka_migrations WHERE name IN ('p009_log_end', 'p011_projected')",
        f"CREATE ROLE {role} LOGIN",
        f"GRANT USAGE ON SCHEMA public TO {role}",
        f"GRANT SELECT, INSERT ON events, blobs, search_text, toka_migrations, usage_requests TO {role}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON sessions, session_agents, session_kinds, usage_buckets,"
        f" append_batches, cursors TO {role}",
    )
    try:
        upgraded = await PostgresStore.open(postgres_database)
        await upgraded.close()
        await change(postgres_database, "DELETE FROM events WHERE seq = 10")
        as_role = await PostgresStore.open(as_user(postgres_database, role))
        try:
            [appended] = await as_role.append([NewEvent("s0", "message", {"n": "after"})])
            assert appended.event.seq == 11
            assert missing(await as_role.verify()) == [10]
        finally:
            await as_role.close()
    finally:
        await change(postgres_database, f"DROP OWNED BY {role}", f"DROP ROLE {role}")


async def test_the_tree_of_a_long_log_is_read_in_the_background_then_grown(store: PostgresStore) -> None:
    for start in range(0, 25_000, 5000):
        await store.append([NewEvent(f"s{n % 7}", "message", {"n": n}) for n in range(start, start + 5000)])

    first = await store.tree()
    # What was read so far: nothing yet, as the read runs in the background (a daemon's start does not wait).
    assert first is not None and first.size == 0
    await asyncio.gather(*[task for task in asyncio.all_tasks() if task.get_name() == "tree"])
    await store.append([NewEvent("s0", "message", {"n": "after"})])
    grown = await store.tree()

    assert grown is not None and grown.size == 25_001
    report = await store.check_tree([SignedRoot(grown.size, grown.root(), "the head")])
    assert (report.matched, report.problem_count) == (1, 0)
