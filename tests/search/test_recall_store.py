"""The vector index behind the store's interface (store/vectors.py), on each backend: vectors and
the cursor stored together, exact nearest neighbours narrowed like a search, cleared for a new
model; the same answers on SQLite (numpy or sqlite-vec) and PostgreSQL (pgvector). Vectors here
are made by hand, so each neighbour's similarity is known exactly."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import pytest

from store.base import EventStore
from store.errors import UsageError
from store.events import NewEvent
from store.search import SearchQuery
from store.sqlite.store import SqliteStore
from store.sqlite.vectors import load_sqlite_vec, nearest
from store.vectors import VectorIndex, VectorState, embedded_text, pack

LONG = "the job queue is persisted in streams of the cache server rather than in a separate broker process"


def unit(*values: float) -> bytes:
    norm = math.sqrt(sum(v * v for v in values))
    return pack([v / norm for v in values])


async def seeded(store: EventStore) -> VectorIndex:
    """Four events with text in two sessions, vectors stored for three of them."""
    await store.append(
        [
            NewEvent(session="queue", kind="note.decision", payload={"text": "use streams for the job queue"}),
            NewEvent(session="queue", kind="message", agent="main", payload={"text": LONG}),
            NewEvent(session="other", kind="message", payload={"text": "the login page times out after a minute"}),
            NewEvent(session="other", kind="tool.result", payload={"output": "not embedded"}),
        ]
    )
    index = vectors_of(store)
    rows = [(1, unit(1, 0, 0)), (2, unit(1, 1, 0)), (3, unit(0, 0, 1))]
    await index.add(rows, VectorState("test-model", 4, 3))
    return index


def vectors_of(store: EventStore) -> VectorIndex:
    return store.vectors()


async def pgvector_or_skip(store: EventStore) -> None:
    try:
        await store.vectors().state()
    except UsageError as exc:
        pytest.skip(f"{exc.message}: {exc.hint}")


@pytest.mark.parametrize("backend", ["sqlite", "postgres"], indirect=True)
async def test_vectors_and_cursor_are_stored_together_and_the_nearest_come_first(store: EventStore) -> None:
    if store.location.startswith("postgres"):
        await pgvector_or_skip(store)
    index = await seeded(store)
    assert await index.state() == VectorState("test-model", 4, 3)
    hits = await index.nearest(unit(1, 0.2, 0), SearchQuery("", limit=3))
    assert [hit.seq for hit in hits] == [1, 2, 3]
    assert [round(hit.similarity, 4) for hit in hits] == [
        round(1 / math.sqrt(1.04), 4),
        round(1.2 / math.sqrt(1.04) / math.sqrt(2), 4),
        0.0,
    ]
    assert (hits[1].session, hits[1].agent, hits[1].kind, hits[1].text) == ("queue", "main", "message", LONG)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"], indirect=True)
async def test_the_nearest_are_narrowed_by_session_agent_and_kind(store: EventStore) -> None:
    if store.location.startswith("postgres"):
        await pgvector_or_skip(store)
    index = await seeded(store)
    toward = unit(0, 0, 1)
    assert [h.seq for h in await index.nearest(toward, SearchQuery("", session="queue", limit=5))] == [1, 2]
    assert [h.seq for h in await index.nearest(toward, SearchQuery("", agent="main", limit=5))] == [2]
    assert [h.seq for h in await index.nearest(toward, SearchQuery("", kinds=("note.*",), limit=5))] == [1]
    assert [h.seq for h in await index.nearest(toward, SearchQuery("", limit=1))] == [3]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"], indirect=True)
async def test_clearing_for_a_new_model_empties_the_index_and_starts_the_cursor_over(store: EventStore) -> None:
    if store.location.startswith("postgres"):
        await pgvector_or_skip(store)
    index = await seeded(store)
    await index.clear("another-model")
    assert await index.state() == VectorState("another-model", 0, 0)
    assert await index.nearest(unit(1, 0, 0), SearchQuery("", limit=5)) == []


@pytest.mark.parametrize("backend", ["memory"], indirect=True)
def test_the_memory_backend_keeps_no_vectors_and_says_so(store: EventStore) -> None:
    with pytest.raises(UsageError, match="keeps no vectors") as raised:
        store.vectors()
    assert raised.value.hint is not None and "--fts" in raised.value.hint


async def test_sqlite_vec_and_numpy_find_the_same_neighbours(sqlite_store: SqliteStore, db_path: Path) -> None:
    await seeded(sqlite_store)
    query = SearchQuery("", limit=3)
    with sqlite3.connect(db_path) as db:
        by_numpy = nearest(db, unit(1, 0.2, 0), query, with_extension=False)
        if not load_sqlite_vec(db):
            pytest.skip("this Python's sqlite3 cannot load extensions: only numpy compares vectors here")
        by_extension = nearest(db, unit(1, 0.2, 0), query, with_extension=True)
    assert [h.seq for h in by_extension] == [h.seq for h in by_numpy] == [1, 2, 3]
    assert [round(h.similarity, 5) for h in by_extension] == [round(h.similarity, 5) for h in by_numpy]


def test_what_is_embedded_and_what_is_not() -> None:
    assert embedded_text("note.decision", {"text": "Redis streams, not RabbitMQ"}) == "Redis streams, not RabbitMQ"
    assert embedded_text("memory.set", {"key": "queue", "value": "redis streams"}) == "queue\nredis streams"
    assert embedded_text("message", {"text": LONG}) == LONG
    assert embedded_text("message", {"text": "Now let me check the tests and run the build:"}) is None  # 10 words
    assert embedded_text("tool.result", {"output": LONG}) is None  # tool output: not by default
    assert embedded_text("tool.result", {"output": LONG}, kinds=("tool.result",)) == LONG
    assert embedded_text("note.todo", {"text": "ship it"}) is None  # two words
    assert len(embedded_text("message", {"text": "word " * 5000}) or "") == 4000
    twenty = {"text": " ".join(["word"] * 20)}
    assert embedded_text("message", twenty) == twenty["text"]  # 16 words at least: the default model's
    assert embedded_text("message", twenty, message_words=25) is None  # a model that asks for 25 (MiniLM)
    assert embedded_text("note.todo", {"text": "write release notes"}, message_words=25) is not None  # notes: 3


async def test_the_matrix_of_a_whole_log_search_follows_adds_and_clears(sqlite_store: SqliteStore) -> None:
    index = await seeded(sqlite_store)
    everywhere = SearchQuery("", limit=2)
    assert [h.seq for h in await index.nearest(unit(0, 1, 0), everywhere)] == [2, 1]  # the matrix is read
    await sqlite_store.append([NewEvent(session="late", kind="note.todo", payload={"text": "a late note here"})])
    await index.add([(5, unit(0, 1, 0))], VectorState("test-model", 5, 4))
    assert [(h.seq, round(h.similarity, 4)) for h in await index.nearest(unit(0, 1, 0), everywhere)] == [
        (5, 1.0),
        (2, round(1 / math.sqrt(2), 4)),
    ]
    # the kinds asked for are applied to the matrix's candidates; narrowed searches read the table
    notes = SearchQuery("", kinds=("note.*",), limit=5)
    assert [h.seq for h in await index.nearest(unit(0, 1, 0), notes)] == [5, 1]
    assert [h.seq for h in await index.nearest(unit(0, 1, 0), SearchQuery("", session="late", limit=5))] == [5]
    await index.clear("another-model")
    assert await index.nearest(unit(0, 1, 0), everywhere) == []
