"""Payloads as stored (large ones once per distinct content, compressed where it pays; in SQLite
small ones in their event's row) and stats()."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from store.base import EventStore
from store.ephemeral import EphemeralStore
from store.events import NewEvent, canonical_json, digest
from store.rows import CODEC_ZLIB, COMPRESS_FROM, INLINE_BELOW
from store.sqlite.store import SqliteStore

TOOL_OUTPUT = {"stdout": "total 0\ndrwxr-xr-x  2 root root 4096 .\n" * 30, "exit": 0}


def blob_row(path: Path, name: str) -> tuple[int, int, int]:
    """(size, codec, stored length) of one blob, read straight from the file."""
    with closing(sqlite3.connect(path)) as db:
        row = db.execute("SELECT size, codec, length(data) FROM blobs WHERE digest = ?", (name,)).fetchone()
    assert row is not None, f"no blob {name}"
    return row


async def test_the_same_payload_appended_1000_times_is_one_blob(store: EventStore) -> None:
    size = len(canonical_json(TOOL_OUTPUT))
    assert size >= INLINE_BELOW  # one SQLite keeps in blobs, deduplicated, as the other backends do
    # Singly and in batches, in two sessions and under two kinds: only the content names a blob.
    for _ in range(100):
        await store.append([NewEvent("s1", "tool.result", TOOL_OUTPUT)])
    for n in range(9):
        session, kind = ("s2", "note.output") if n % 2 else ("s1", "tool.result")
        await store.append([NewEvent(session, kind, dict(TOOL_OUTPUT)) for _ in range(100)])

    stats = await store.stats()

    assert (stats.events, stats.sessions, stats.blobs) == (1000, 2, 1)
    assert stats.payload_bytes == 1000 * size
    assert stats.blob_bytes == size
    assert stats.dedup_ratio == 1000.0


async def test_stats_count_events_sessions_blobs_and_bytes(store: EventStore) -> None:
    payloads = [{"n": 1}, {"n": 2}, {"n": 1}, {"text": "x" * 50}]
    await store.append([NewEvent(f"s{i % 3}", "message", p) for i, p in enumerate(payloads)])
    sizes = {digest(canonical_json(p)): len(canonical_json(p)) for p in payloads}

    # SQLite keeps these small payloads in their events' rows, each once per event that has it.
    stored = [len(canonical_json(p)) for p in payloads] if isinstance(store, SqliteStore) else list(sizes.values())

    stats = await store.stats()

    assert (stats.events, stats.sessions, stats.blobs) == (4, 3, len(stored))
    assert stats.payload_bytes == sum(len(canonical_json(p)) for p in payloads)
    assert stats.blob_bytes == sum(stored)
    assert stats.stored_bytes == stats.blob_bytes  # all small: none is compressed
    assert stats.dedup_ratio == stats.payload_bytes / stats.blob_bytes
    if isinstance(store, EphemeralStore):
        assert stats.disk_bytes == 0  # the memory backend keeps nothing on disk
    else:
        assert stats.disk_bytes > 0  # SQLite's files, PostgreSQL's database


async def test_stats_of_an_empty_store(store: EventStore) -> None:
    stats = await store.stats()

    assert (stats.events, stats.sessions, stats.blobs) == (0, 0, 0)
    assert (stats.payload_bytes, stats.blob_bytes, stats.stored_bytes) == (0, 0, 0)
    assert stats.dedup_ratio == 1.0


async def test_a_large_payload_reads_back_identical(store: EventStore) -> None:
    payload = {"file": "main.py", "text": "def handler(event):\n    return event\n" * 200, "ü": "ß"}

    [result] = await store.append([NewEvent("s1", "tool.result", payload)])

    assert (await store.get(result.event.id)).payload == payload
    assert (await store.get_by_seq(1)).payload == payload
    assert [e.payload async for e in store.replay("s1")] == [payload]


async def test_a_large_compressible_payload_is_stored_compressed(sqlite_store: SqliteStore, db_path: Path) -> None:
    payload = {"text": "def handler(event):\n    return event\n" * 200}
    size = len(canonical_json(payload))
    assert size > COMPRESS_FROM

    [result] = await sqlite_store.append([NewEvent("s1", "tool.result", payload)])

    stored_size, codec, stored_length = blob_row(db_path, result.event.digest)
    assert (stored_size, codec) == (size, CODEC_ZLIB)
    assert stored_length < size / 10
    assert (await sqlite_store.get(result.event.id)).payload == payload
    stats = await sqlite_store.stats()
    assert (stats.blob_bytes, stats.stored_bytes) == (size, stored_length)


async def test_a_small_payload_is_stored_as_it_is_in_its_event_row(sqlite_store: SqliteStore, db_path: Path) -> None:
    payload = {"text": "ab" * 100}

    [result] = await sqlite_store.append([NewEvent("s1", "message", payload)])

    with closing(sqlite3.connect(db_path)) as db:
        inline = db.execute("SELECT payload FROM events WHERE id = ?", (result.event.id,)).fetchone()[0]
        in_blobs = db.execute("SELECT count(*) FROM blobs").fetchone()[0]
    assert inline == canonical_json(payload)
    assert in_blobs == 0
    assert (await sqlite_store.get(result.event.id)).payload == payload


async def test_a_payload_just_under_the_threshold_is_inline_and_one_at_it_in_blobs(
    sqlite_store: SqliteStore, db_path: Path
) -> None:
    def sized(n: int) -> dict[str, str]:
        return {"text": "x" * (n - len(canonical_json({"text": ""})))}

    small, large = await sqlite_store.append(
        [NewEvent("s1", "message", sized(INLINE_BELOW - 1)), NewEvent("s1", "message", sized(INLINE_BELOW))]
    )

    with closing(sqlite3.connect(db_path)) as db:
        rows = dict(db.execute("SELECT id, payload FROM events").fetchall())
    assert rows[small.event.id] == canonical_json(sized(INLINE_BELOW - 1))
    assert rows[large.event.id] is None
    assert blob_row(db_path, large.event.digest)[0] == INLINE_BELOW
    with closing(sqlite3.connect(db_path)) as db:
        assert db.execute("SELECT count(*) FROM blobs WHERE digest = ?", (small.event.digest,)).fetchone()[0] == 0
    assert [e.payload async for e in sqlite_store.replay("s1")] == [sized(INLINE_BELOW - 1), sized(INLINE_BELOW)]
    assert (await sqlite_store.verify()).ok


async def test_stats_count_payloads_inline_and_in_blobs(sqlite_store: SqliteStore) -> None:
    small, large = {"n": 1}, {"text": "line of tool output\n" * 100}
    await sqlite_store.append([NewEvent("s1", "message", small) for _ in range(3)])
    await sqlite_store.append([NewEvent("s1", "tool.result", large) for _ in range(2)])
    small_size, large_size = len(canonical_json(small)), len(canonical_json(large))

    stats = await sqlite_store.stats()

    assert (stats.events, stats.blobs) == (5, 4)  # three rows with {"n":1}, one blob shared by two
    assert stats.payload_bytes == 3 * small_size + 2 * large_size
    assert stats.blob_bytes == 3 * small_size + large_size
    assert small_size * 3 < stats.stored_bytes < stats.blob_bytes  # the large one compressed


async def test_a_payload_is_found_by_digest_prefix_inline_or_in_blobs(sqlite_store: SqliteStore) -> None:
    small, large = {"n": 1}, {"text": "line of tool output\n" * 100}
    [inline, in_blobs] = await sqlite_store.append(
        [NewEvent("s1", "message", small), NewEvent("s1", "tool.result", large)]
    )

    assert await sqlite_store.payload(inline.event.digest[:10]) == (inline.event.digest, small)
    assert await sqlite_store.payload(inline.event.digest) == (inline.event.digest, small)
    assert await sqlite_store.payload(in_blobs.event.digest[:10]) == (in_blobs.event.digest, large)


async def test_a_large_payload_stored_again_keeps_its_one_blob(sqlite_store: SqliteStore, db_path: Path) -> None:
    payload = {"text": "line of tool output\n" * 500}

    first = await sqlite_store.append([NewEvent("s1", "tool.result", payload)])
    again = await sqlite_store.append([NewEvent("s2", "tool.result", payload) for _ in range(3)])

    assert {r.event.digest for r in first + again} == {first[0].event.digest}
    stats = await sqlite_store.stats()
    assert (stats.events, stats.blobs) == (4, 1)
    assert blob_row(db_path, first[0].event.digest)[1] == CODEC_ZLIB
    assert [(await sqlite_store.get(r.event.id)).payload for r in again] == [payload] * 3
