"""The SQLite search index: kept inside the append's transaction, built by migration m004 for a
database written before it, and the same index a plain sqlite3 connection queries."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, closing
from pathlib import Path

import pytest

from store.errors import StoreError
from store.events import NewEvent
from store.search import SearchQuery
from store.sqlite import schema as migrations
from store.sqlite.store import SqliteStore

OpenSqlite = Callable[..., AbstractAsyncContextManager[SqliteStore]]


def message(session: str, text: str) -> NewEvent:
    return NewEvent(session=session, kind="message", payload={"role": "user", "text": text})


def raw_fts(path: Path, sql: str, *params: object) -> list[tuple]:
    with closing(sqlite3.connect(path)) as db:
        return db.execute(sql, params).fetchall()


async def test_a_batch_that_fails_mid_write_leaves_the_index_as_it_was(db_path: Path, open_sqlite: OpenSqlite) -> None:
    async with open_sqlite(db_path) as store:
        await store.append([message("ok", "first words")])
    # A trigger that fails the batch after its text went into the index, before it commits.
    with closing(sqlite3.connect(db_path)) as db:
        db.execute(
            "CREATE TRIGGER poison BEFORE INSERT ON sessions WHEN NEW.session = 'poisoned'"
            " BEGIN SELECT RAISE(ABORT, 'poisoned'); END"
        )
        db.commit()
    async with open_sqlite(db_path) as store:
        # The append commits the log alone: the batch that fails is the one applying it to the
        # derived tables, which a search runs first.
        await store.append([message("ok", "aardvark arrives"), message("poisoned", "aardvark again")])
        with pytest.raises(StoreError):
            await store.search(SearchQuery("aardvark"))
        assert store.unprojected() == 2  # applied at the next read, or at the next open
    assert raw_fts(db_path, "SELECT count(*) FROM search_text") == [(1,)]
    assert raw_fts(db_path, "SELECT rowid FROM search_index WHERE search_index MATCH 'aardvark'") == []
    assert raw_fts(db_path, "SELECT seq FROM projected") == [(1,)]
    with closing(sqlite3.connect(db_path)) as db:
        db.execute("DROP TRIGGER poison")
        db.commit()
    async with open_sqlite(db_path) as store:
        assert sorted(hit.seq for hit in await store.search(SearchQuery("aardvark"))) == [2, 3]
    # FTS5's own check that the index matches its content table.
    raw_fts(db_path, "INSERT INTO search_index (search_index) VALUES ('integrity-check')")


async def test_a_database_from_before_search_upgrades_and_is_searchable(db_path: Path, open_sqlite: OpenSqlite) -> None:
    async with open_sqlite(db_path) as store:
        await store.append([message("old", "legacy pelican notes"), message("old", "x" * 5000 + " pelican")])
        await store.append([NewEvent(session="old", kind="usage", payload={"input_tokens": 3})])
    # Back to the schema of m001..m003, as a toka from before search left it.
    with closing(sqlite3.connect(db_path, isolation_level=None)) as db:
        # Every payload in blobs, as then (m015 keeps small ones in their events' rows).
        db.execute(
            "INSERT OR IGNORE INTO blobs SELECT digest, length(payload), 0, payload FROM events"
            " WHERE payload IS NOT NULL"
        )
        db.execute("ALTER TABLE events DROP COLUMN payload")
        db.execute("DROP TABLE search_index")
        db.execute("DROP TABLE search_text")
        db.execute("DROP TABLE pruned")
        db.execute("DROP TABLE usage_buckets")
        db.execute("DROP TABLE merkle")
        db.execute("DROP TABLE usage_requests")
        db.execute("DROP TABLE cursors")
        db.execute("DROP TABLE vectors")
        db.execute("DROP TABLE projected")
        db.execute(
            "DELETE FROM toka_migrations WHERE name IN ('m004_search_index', 'm005_pruned', 'm006_usage_buckets',"
            " 'm007_merkle', 'm008_usage_requests', 'm009_cursors', 'm010_usage_claims_by_size',"
            " 'm011_search_merges', 'm012_last_active', 'm013_vectors', 'm014_projected', 'm015_inline_payloads')"
        )
        db.execute("PRAGMA user_version = 3")
    tables = {row[0] for row in raw_fts(db_path, "SELECT name FROM sqlite_master")}
    assert "search_index" not in tables

    async with open_sqlite(db_path) as store:
        hits = await store.search(SearchQuery("pelican"))
        assert sorted(hit.seq for hit in hits) == [1, 2]  # the second payload was stored compressed
        await store.append([message("new", "a new pelican")])
        assert len(await store.search(SearchQuery("pelican"))) == 3
    names = [row[0] for row in raw_fts(db_path, "SELECT name FROM toka_migrations ORDER BY seq")]
    assert names[-12:] == [
        "m004_search_index",
        "m005_pruned",
        "m006_usage_buckets",
        "m007_merkle",
        "m008_usage_requests",
        "m009_cursors",
        "m010_usage_claims_by_size",
        "m011_search_merges",
        "m012_last_active",
        "m013_vectors",
        "m014_projected",
        "m015_inline_payloads",
    ]
    # and the index merges its segments as a new one would (m011)
    assert raw_fts(db_path, "SELECT v FROM search_index_config WHERE k = 'automerge'") == [(16,)]


async def test_the_store_ranks_as_raw_fts5_does(sqlite_store: SqliteStore, db_path: Path) -> None:
    texts = ["timeout timeout pool", "timeout in a long line " + "word " * 50, "pool only", "timeout pool pool pool"]
    await sqlite_store.append([message("s", text) for text in texts])
    hits = await sqlite_store.search(SearchQuery("timeout OR pool"))
    raw = raw_fts(
        db_path,
        "SELECT rowid, -bm25(search_index) FROM search_index WHERE search_index MATCH ? ORDER BY rank",
        "timeout OR pool",
    )
    assert [(hit.seq, hit.score) for hit in hits] == raw


async def test_rebuild_repairs_a_lost_index(sqlite_store: SqliteStore, db_path: Path) -> None:
    await sqlite_store.append([message("s", "the quick brown fox"), message("s", "lazy dog")])
    await sqlite_store.project()  # in the index, before it is lost
    with closing(sqlite3.connect(db_path)) as db:
        db.execute("INSERT INTO search_index (search_index) VALUES ('delete-all')")
        db.execute("DELETE FROM search_text")
        db.commit()
    assert await sqlite_store.search(SearchQuery("fox")) == []
    assert await sqlite_store.rebuild_search_index() == 2
    assert [hit.seq for hit in await sqlite_store.search(SearchQuery("fox OR dog"))] in ([1, 2], [2, 1])


def test_the_migration_says_so_when_fts5_is_missing() -> None:
    class NoFts5:
        """A connection whose SQLite was built without FTS5, as far as the migration can tell."""

        def execute(self, sql: str, *args: object) -> None:
            raise sqlite3.OperationalError("no such module: fts5")

    with pytest.raises(StoreError) as caught:
        migrations.m004_search_index(NoFts5())  # type: ignore[arg-type]
    assert "FTS5" in caught.value.message and caught.value.hint
