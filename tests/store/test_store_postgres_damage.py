"""A PostgreSQL log changed behind toka's back, by SQL as anyone with access to the database could:
verify names each damaged event and the kind of damage, JSON answers refuse a payload that does not
match its digest, and rebuilt session tables are the log's again. (The SQLite cases, which change the
file, are in test_store_verify.py and test_store_projections.py.) Also how payloads are stored."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from store.base import CHUNK, EventQuery
from store.errors import IntegrityError
from store.events import Event, NewEvent, canonical_json
from store.postgres.store import PostgresStore
from store.rows import CODEC_RAW, CODEC_ZLIB, COMPRESS_FROM


@pytest.fixture
def store(postgres_database: str, loop: asyncio.AbstractEventLoop) -> Iterator[PostgresStore]:
    opened = loop.run_until_complete(PostgresStore.open(postgres_database))
    yield opened
    loop.run_until_complete(opened.close())


async def change(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Run ``sql`` on a connection of its own, committed; its rows, if it returns any."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cursor = await conn.execute(sql, params or None)
        return await cursor.fetchall() if cursor.description else []


async def write_log(store: PostgresStore) -> list[Event]:
    """Two interleaved sessions: s1 gets seqs 1, 2, 4, 5, 7, 8 and s2 gets 3, 6, 9."""
    for n in range(3):
        await store.append(
            [
                NewEvent("s1", "tool.call", {"v": 2 * n}, "claude"),
                NewEvent("s1", "tool.result", {"v": 2 * n + 1}, "claude"),
                NewEvent("s2", "message", {"text": f"hello {n}"}, "user"),
            ]
        )
    await store.project()  # the log written and its tables caught up, before anyone tampers with it
    return await store.query(EventQuery())


BLOB_OF_SEQ_5 = "(SELECT digest FROM events WHERE seq = 5)"


async def test_verify_names_changed_payload_bytes(store: PostgresStore, postgres_database: str) -> None:
    events = await write_log(store)
    [(codec, data)] = await change(postgres_database, f"SELECT codec, data FROM blobs WHERE digest = {BLOB_OF_SEQ_5}")
    assert (codec, bytes(data)) == (CODEC_RAW, b'{"v":3}')
    await change(postgres_database, f"UPDATE blobs SET data = %s WHERE digest = {BLOB_OF_SEQ_5}", b'{"v":4}')

    assert (await store.get_by_seq(5)).payload == {"v": 4}  # reads do not check; verify does
    report = await store.verify()

    assert report.problem_count == 1
    [problem] = report.problems
    assert (problem.seq, problem.id, problem.session, problem.what) == (5, events[4].id, "s1", "digest")


@pytest.mark.parametrize("codec, data", [(1, b"not zlib at all"), (7, b'{"v":3}')], ids=["bad zlib", "unknown codec"])
async def test_verify_names_a_payload_that_cannot_be_decoded(
    store: PostgresStore, postgres_database: str, codec: int, data: bytes
) -> None:
    events = await write_log(store)
    damage = f"UPDATE blobs SET codec = %s, data = %s WHERE digest = {BLOB_OF_SEQ_5}"
    await change(postgres_database, damage, codec, data)

    report = await store.verify()

    [problem] = report.problems
    assert (problem.seq, problem.id, problem.what) == (5, events[4].id, "payload")


@pytest.mark.parametrize("column, value", [("kind", "tool.called"), ("ts", 1), ("agent", "mallory"), ("key", "k")])
async def test_verify_names_a_changed_header_field(
    store: PostgresStore, postgres_database: str, column: str, value: object
) -> None:
    events = await write_log(store)
    await change(postgres_database, f"UPDATE events SET {column} = %s WHERE seq = 4", value)

    report = await store.verify()
    by_session = await store.verify("s1")

    [problem] = report.problems
    assert (problem.seq, problem.id, problem.session, problem.what) == (4, events[3].id, "s1", "id")
    assert by_session.problems == report.problems
    assert (await store.verify("s2")).ok


async def test_verify_names_the_event_after_a_deleted_one(store: PostgresStore, postgres_database: str) -> None:
    events = await write_log(store)
    await change(postgres_database, "DELETE FROM events WHERE seq = 4")

    report = await store.verify()

    # seq 4 was s1's third event: no event holds its seq, and s1's next one (seq 5) names it as parent.
    hole, problem = report.problems
    assert (hole.seq, hole.id, hole.session, hole.what) == (4, "", "", "missing")
    assert (problem.seq, problem.id, problem.session, problem.what) == (5, events[4].id, "s1", "chain")
    assert events[3].id[:12] in problem.detail
    assert report.events == 8


async def test_verify_names_a_deleted_last_event_of_a_session(store: PostgresStore, postgres_database: str) -> None:
    events = await write_log(store)
    await change(postgres_database, "DELETE FROM events WHERE seq = 9")

    report = await store.verify()

    # The log's recorded end is seq 9, which no event holds now.
    hole, problem = report.problems
    assert (hole.seq, hole.what) == (9, "missing")
    assert (problem.id, problem.session, problem.what) == (events[8].id, "s2", "head")
    assert (await store.verify("s1")).ok


async def test_verify_follows_chains_across_its_chunks(store: PostgresStore, postgres_database: str) -> None:
    # Verify reads CHUNK events at a time; the events around each boundary chain across it.
    total = 2 * CHUNK + 10
    for start in range(0, total, 500):
        await store.append([NewEvent(f"s{n % 3}", "message", {"n": n}) for n in range(start, min(total, start + 500))])
    assert (await store.verify()).ok
    events = await store.query(EventQuery())
    await change(postgres_database, "DELETE FROM events WHERE seq IN (%s, %s)", CHUNK, 2 * CHUNK + 1)

    report = await store.verify()

    # Each deleted seq is missing, and its successor in its session (three seqs on) names it as its parent.
    assert [(p.seq, p.what) for p in report.problems] == [
        (CHUNK, "missing"),
        (CHUNK + 3, "chain"),
        (2 * CHUNK + 1, "missing"),
        (2 * CHUNK + 4, "chain"),
    ]
    assert [p.id for p in report.problems if p.what == "chain"] == [events[CHUNK + 2].id, events[2 * CHUNK + 3].id]
    assert report.events == total - 2


async def test_json_answers_refuse_a_payload_that_does_not_match_its_digest(
    store: PostgresStore, postgres_database: str
) -> None:
    await write_log(store)
    await change(postgres_database, f"UPDATE blobs SET data = %s WHERE digest = {BLOB_OF_SEQ_5}", b'{"v":4')

    assert len(await store.query_json(EventQuery(before_seq=5))) == 4  # the events before it read
    with pytest.raises(IntegrityError, match=r"seq 5\) does not match its digest"):
        await store.query_json(EventQuery())


@pytest.mark.parametrize(
    "damage",
    [
        "DELETE FROM sessions; DELETE FROM session_agents; DELETE FROM session_kinds",
        "UPDATE sessions SET events = 0, head = 'x'; UPDATE session_kinds SET events = 7",
        "DELETE FROM session_agents WHERE agent = 'claude'; DELETE FROM sessions WHERE session = 's2'",
    ],
    ids=["emptied", "wrong", "partly deleted"],
)
async def test_rebuild_restores_damaged_session_tables(
    store: PostgresStore, postgres_database: str, damage: str
) -> None:
    await write_log(store)
    before = await store.sessions()
    for statement in damage.split("; "):
        await change(postgres_database, statement)
    assert await store.sessions() != before

    assert await store.rebuild_projections() == len(before) == 2

    assert await store.sessions() == before
    assert (await store.verify()).ok
    # Appends after the rebuild extend what it rebuilt.
    await store.append([NewEvent("s2", "message", {"text": "later"}, "user")])
    assert (await store.session("s2")).events == 4


async def test_a_large_compressible_payload_is_stored_compressed(store: PostgresStore, postgres_database: str) -> None:
    large = {"output": "line of a build log\n" * 200}
    small = {"text": "hi"}
    assert len(canonical_json(large)) >= COMPRESS_FROM > len(canonical_json(small))
    batch = [NewEvent("s", "tool.result", large), NewEvent("s", "message", small)]
    written = [r.event for r in await store.append(batch)]

    blobs = await change(postgres_database, "SELECT digest, size, codec, length(data) FROM blobs")
    stored = {digest: (size, codec, length) for digest, size, codec, length in blobs}

    size, codec, length = stored[written[0].digest]
    assert (size, codec) == (len(canonical_json(large)), CODEC_ZLIB) and length < size / 10
    assert stored[written[1].digest] == (len(canonical_json(small)), CODEC_RAW, len(canonical_json(small)))
    assert [(await store.get(e.id)).payload for e in written] == [large, small]
    stats = await store.stats()
    assert stats.blob_bytes == sum(size for size, _, _ in stored.values())
    assert stats.stored_bytes == sum(length for _, _, length in stored.values())
