"""Payload blobs (stored once per distinct content, compressed where it pays) and stats()."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from store.base import EventStore
from store.ephemeral import EphemeralStore
from store.events import NewEvent, canonical_json, digest
from store.rows import CODEC_RAW, CODEC_ZLIB, COMPRESS_FROM
from store.sqlite.store import SqliteStore

TOOL_OUTPUT = {"stdout": "total 0\ndrwxr-xr-x  2 root root 4096 .\n", "exit": 0}


def blob_row(path: Path, name: str) -> tuple[int, int, int]:
    """(size, codec, stored length) of one blob, read straight from the file."""
    with closing(sqlite3.connect(path)) as db:
        row = db.execute("SELECT size, codec, length(data) FROM blobs WHERE digest = ?", (name,)).fetchone()
    assert row is not None, f"no blob {name}"
    return row


async def test_the_same_payload_appended_1000_times_is_one_blob(store: EventStore) -> None:
    size = len(canonical_json(TOOL_OUTPUT))
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

    stats = await store.stats()

    assert (stats.events, stats.sessions, stats.blobs) == (4, 3, 3)
    assert stats.payload_bytes == sum(len(canonical_json(p)) for p in payloads)
    assert stats.blob_bytes == sum(sizes.values())
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


async def test_a_small_payload_is_stored_as_it_is(sqlite_store: SqliteStore, db_path: Path) -> None:
    payload = {"text": "ab" * 100}

    [result] = await sqlite_store.append([NewEvent("s1", "message", payload)])

    size = len(canonical_json(payload))
    assert blob_row(db_path, result.event.digest) == (size, CODEC_RAW, size)


async def test_a_large_payload_stored_again_keeps_its_one_blob(sqlite_store: SqliteStore, db_path: Path) -> None:
    payload = {"text": "line of tool output\n" * 500}

    first = await sqlite_store.append([NewEvent("s1", "tool.result", payload)])
    again = await sqlite_store.append([NewEvent("s2", "tool.result", payload) for _ in range(3)])

    assert {r.event.digest for r in first + again} == {first[0].event.digest}
    stats = await sqlite_store.stats()
    assert (stats.events, stats.blobs) == (4, 1)
    assert blob_row(db_path, first[0].event.digest)[1] == CODEC_ZLIB
    assert [(await sqlite_store.get(r.event.id)).payload for r in again] == [payload] * 3
