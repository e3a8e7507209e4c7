"""Schema migrations: a blank database reaches the exact final schema, an old one upgrades, and a
database from a newer toka is refused without a byte changed."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager, closing, contextmanager
from pathlib import Path

import pytest
from older_toka import as_older_toka

from store.base import EventQuery
from store.errors import SchemaTooNew
from store.events import NewEvent, canonical_json, digest, header_id
from store.rows import CODEC_RAW, CODEC_ZLIB, COMPRESS_FROM
from store.sqlite import connect, projector
from store.sqlite import schema as migrations
from store.sqlite import usage as sqlite_usage
from store.sqlite.schema import MIGRATIONS
from store.sqlite.store import SqliteStore
from store.usage import NO_NAMES

OpenSqlite = Callable[..., AbstractAsyncContextManager[SqliteStore]]
T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z in microseconds

# The schema a blank database ends with, as sqlite_master holds it (whitespace collapsed).
# A new migration changes this on purpose; anything else changing it is a bug.
FINAL_SCHEMA = [
    (
        "index",
        "events_session_key",
        "events",
        "CREATE UNIQUE INDEX events_session_key ON events (session, key) WHERE key IS NOT NULL",
    ),
    ("index", "events_session_seq", "events", "CREATE INDEX events_session_seq ON events (session, seq)"),
    ("index", "pruned_checkpoint", "pruned", "CREATE INDEX pruned_checkpoint ON pruned (checkpoint, seq)"),
    ("index", "pruned_seq", "pruned", "CREATE INDEX pruned_seq ON pruned (seq)"),
    (
        "index",
        "pruned_session_key",
        "pruned",
        "CREATE UNIQUE INDEX pruned_session_key ON pruned (session, key) WHERE key IS NOT NULL",
    ),
    ("index", "sqlite_autoindex_blobs_1", "blobs", None),
    ("index", "sqlite_autoindex_events_1", "events", None),
    ("index", "sqlite_autoindex_toka_migrations_1", "toka_migrations", None),
    (
        "index",
        "usage_buckets_session",
        "usage_buckets",
        "CREATE INDEX usage_buckets_session ON usage_buckets (session)",
    ),
    (
        "table",
        "blobs",
        "blobs",
        "CREATE TABLE blobs ( digest TEXT PRIMARY KEY, size INTEGER NOT NULL, codec INTEGER NOT NULL,"
        " data BLOB NOT NULL )",
    ),
    (
        "table",
        "cursors",
        "cursors",
        "CREATE TABLE cursors ( name TEXT PRIMARY KEY, value TEXT NOT NULL, updated_us INTEGER NOT NULL )"
        " WITHOUT ROWID",
    ),
    (
        "table",
        "events",
        "events",
        "CREATE TABLE events ( seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, session TEXT NOT NULL,"
        " agent TEXT, kind TEXT NOT NULL, ts INTEGER NOT NULL, parents TEXT NOT NULL,"
        " digest TEXT NOT NULL, key TEXT , payload BLOB)",
    ),
    (
        "table",
        "merkle",
        "merkle",
        "CREATE TABLE merkle (start INTEGER PRIMARY KEY, size INTEGER NOT NULL, hashes BLOB NOT NULL)",
    ),
    (
        "table",
        "projected",
        "projected",
        "CREATE TABLE projected (name TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID",
    ),
    (
        "table",
        "pruned",
        "pruned",
        "CREATE TABLE pruned ( id TEXT PRIMARY KEY, session TEXT NOT NULL, seq INTEGER NOT NULL,"
        " kind TEXT NOT NULL, key TEXT, checkpoint INTEGER NOT NULL ) WITHOUT ROWID",
    ),
    (
        "table",
        "search_index",
        "search_index",
        "CREATE VIRTUAL TABLE search_index USING fts5(text, content='search_text', content_rowid='seq',"
        " tokenize='unicode61')",
    ),
    (
        "table",
        "search_index_config",
        "search_index_config",
        "CREATE TABLE 'search_index_config'(k PRIMARY KEY, v) WITHOUT ROWID",
    ),
    (
        "table",
        "search_index_data",
        "search_index_data",
        "CREATE TABLE 'search_index_data'(id INTEGER PRIMARY KEY, block BLOB)",
    ),
    (
        "table",
        "search_index_docsize",
        "search_index_docsize",
        "CREATE TABLE 'search_index_docsize'(id INTEGER PRIMARY KEY, sz BLOB)",
    ),
    (
        "table",
        "search_index_idx",
        "search_index_idx",
        "CREATE TABLE 'search_index_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID",
    ),
    (
        "table",
        "search_text",
        "search_text",
        "CREATE TABLE search_text (seq INTEGER PRIMARY KEY, text TEXT NOT NULL)",
    ),
    (
        "table",
        "session_agents",
        "session_agents",
        "CREATE TABLE session_agents ( session TEXT NOT NULL, agent TEXT NOT NULL,"
        " events INTEGER NOT NULL, PRIMARY KEY (session, agent) ) WITHOUT ROWID",
    ),
    (
        "table",
        "session_kinds",
        "session_kinds",
        "CREATE TABLE session_kinds ( session TEXT NOT NULL, kind TEXT NOT NULL,"
        " events INTEGER NOT NULL, PRIMARY KEY (session, kind) ) WITHOUT ROWID",
    ),
    (
        "table",
        "sessions",
        "sessions",
        "CREATE TABLE sessions ( session TEXT PRIMARY KEY, events INTEGER NOT NULL,"
        " first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL, first_ts INTEGER NOT NULL,"
        " last_ts INTEGER NOT NULL, head TEXT NOT NULL ) WITHOUT ROWID",
    ),
    (
        "table",
        "toka_migrations",
        "toka_migrations",
        "CREATE TABLE toka_migrations (seq INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)",
    ),
    (
        "table",
        "usage_buckets",
        "usage_buckets",
        "CREATE TABLE usage_buckets ( bucket INTEGER NOT NULL, session TEXT NOT NULL, agent TEXT NOT NULL,"
        " model TEXT NOT NULL, prompt_class INTEGER NOT NULL, calls INTEGER NOT NULL,"
        " input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, cache_creation_tokens INTEGER NOT NULL,"
        " cache_creation_1h_tokens INTEGER NOT NULL, cache_read_tokens INTEGER NOT NULL,"
        " first_ts INTEGER NOT NULL, last_ts INTEGER NOT NULL, telemetry_calls INTEGER NOT NULL DEFAULT 0,"
        " PRIMARY KEY (bucket, session, agent, model, prompt_class) ) WITHOUT ROWID",
    ),
    (
        "table",
        "usage_requests",
        "usage_requests",
        "CREATE TABLE usage_requests ( session TEXT NOT NULL, request TEXT NOT NULL, origin TEXT NOT NULL,"
        " PRIMARY KEY (session, request) ) WITHOUT ROWID",
    ),
    ("table", "vectors", "vectors", "CREATE TABLE vectors (seq INTEGER PRIMARY KEY, vector BLOB NOT NULL)"),
]


@contextmanager
def raw(path: Path) -> Iterator[sqlite3.Connection]:
    """The file through the stdlib driver in autocommit mode, as the migrations themselves run."""
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        yield db


def schema(path: Path) -> list[tuple[str, str, str, str | None]]:
    with raw(path) as db:
        rows = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
        return [(t, n, tbl, " ".join(sql.split()) if sql else None) for t, n, tbl, sql in rows]


def recorded(path: Path) -> tuple[list[tuple[int, str, str]], int]:
    """toka_migrations' rows and PRAGMA user_version."""
    with raw(path) as db:
        rows = db.execute("SELECT seq, name, applied_at FROM toka_migrations ORDER BY seq").fetchall()
        return rows, db.execute("PRAGMA user_version").fetchone()[0]


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_pinned_schema_has_one_migration_per_step() -> None:
    # Keeps FINAL_SCHEMA honest: when a migration is added, this fails until the pin is updated.
    assert [m.__name__ for m in MIGRATIONS] == [
        "m001_events",
        "m002_session_projections",
        "m003_blobs_by_rowid",
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


async def test_a_blank_database_reaches_the_exact_final_schema(db_path: Path, open_sqlite: OpenSqlite) -> None:
    async with open_sqlite(db_path):
        pass

    assert schema(db_path) == FINAL_SCHEMA
    rows, user_version = recorded(db_path)
    assert [name for _, name, _ in rows] == [m.__name__ for m in MIGRATIONS]
    assert [seq for seq, _, _ in rows] == list(range(1, len(MIGRATIONS) + 1))
    assert user_version == len(MIGRATIONS)


async def test_reopening_a_current_database_applies_nothing(db_path: Path, open_sqlite: OpenSqlite) -> None:
    async with open_sqlite(db_path) as store:
        await store.append([NewEvent("s1", "message", {"text": "hi"})])
    first = recorded(db_path)

    async with open_sqlite(db_path) as store:
        assert len(await store.query(EventQuery())) == 1

    assert recorded(db_path) == first  # same rows, same applied_at times
    assert schema(db_path) == FINAL_SCHEMA
    with raw(db_path) as db:
        assert migrations.migrate(db) == []


def _old_database(path: Path) -> list[str]:
    """A database as the first toka left it: only m001_events applied, three events in it."""
    with raw(path) as db:
        db.execute(
            "CREATE TABLE toka_migrations"
            " (seq INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)"
        )
        db.execute("BEGIN")
        migrations.m001_events(db)
        db.execute("INSERT INTO toka_migrations VALUES (1, 'm001_events', '2026-01-01T00:00:00+00:00')")
        db.execute("PRAGMA user_version = 1")
        db.execute("COMMIT")
        ids: list[str] = []
        for seq in (1, 2, 3):
            payload = canonical_json({"n": seq})
            parents = tuple(ids[-1:])
            event_id = header_id("old", "claude", "message", T0 + seq, parents, digest(payload), None)
            db.execute(
                "INSERT OR IGNORE INTO blobs VALUES (?, ?, ?, ?)",
                (digest(payload), len(payload), CODEC_RAW, payload),
            )
            db.execute(
                "INSERT INTO events VALUES (?, ?, 'old', 'claude', 'message', ?, ?, ?, NULL)",
                (seq, event_id, T0 + seq, ",".join(parents), digest(payload)),
            )
            ids.append(event_id)
    return ids


async def test_an_old_database_upgrades_to_the_full_schema(db_path: Path, open_sqlite: OpenSqlite) -> None:
    ids = _old_database(db_path)
    assert recorded(db_path)[1] == 1

    async with open_sqlite(db_path) as store:
        events = await store.query(EventQuery())
        old = await store.session("old")
        [added] = await store.append([NewEvent("old", "message", {"n": 4}, "claude")])
        report = await store.verify()

    assert schema(db_path) == FINAL_SCHEMA
    rows, user_version = recorded(db_path)
    assert [name for _, name, _ in rows] == [m.__name__ for m in MIGRATIONS]
    assert rows[0][2] == "2026-01-01T00:00:00+00:00"  # the old step is kept, not run again
    assert user_version == len(MIGRATIONS)
    # The events written before the upgrade are all there, and the projection knows them.
    assert [e.id for e in events] == ids
    assert (old.events, old.first_seq, old.last_seq, old.head) == (3, 1, 3, ids[2])
    assert old.agents == {"claude": 3}
    assert (added.event.seq, added.event.parents) == (4, (ids[2],))
    assert report.ok and report.events == 4


async def test_an_old_database_keeps_its_payloads_in_blobs_and_appends_new_ones_inline(
    db_path: Path, open_sqlite: OpenSqlite
) -> None:
    ids = _old_database(db_path)
    large = {"output": "line of tool output\n" * 100}

    async with open_sqlite(db_path) as store:
        old = [e.payload for e in await store.query(EventQuery())]
        small, big = await store.append([NewEvent("old", "message", {"n": 4}), NewEvent("old", "tool.result", large)])
        replayed = [e.payload async for e in store.replay("old")]
        report = await store.verify()

    assert old == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert replayed == [{"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}, large]
    assert report.ok and report.events == 5
    with raw(db_path) as db:
        inline = dict(db.execute("SELECT id, payload FROM events").fetchall())
        in_blobs = {row[0] for row in db.execute("SELECT digest FROM blobs")}
    assert [inline[event_id] for event_id in ids] == [None, None, None]  # the old events keep their blobs
    assert inline[small.event.id] == canonical_json({"n": 4})
    assert inline[big.event.id] is None
    assert in_blobs == {digest(canonical_json({"n": n})) for n in (1, 2, 3)} | {big.event.digest}


async def test_blobs_stored_without_rowid_move_to_a_rowid_table_unchanged(
    db_path: Path, open_sqlite: OpenSqlite, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as old_toka:  # a database as a toka of the first two steps left it
        as_older_toka(old_toka, 2)
        old_toka.setattr(projector, "index_events", lambda db, events: None)  # it had no search index
        old_toka.setattr(connect, "check_projections", lambda db: None)  # nor the projections it checks
        async with open_sqlite(db_path) as store:
            await store.append(
                [
                    NewEvent("s1", "message", {"text": "hi"}),
                    NewEvent("s1", "tool.result", {"output": "line\n" * COMPRESS_FROM}),
                ]
            )
            before = await store.query(EventQuery())
    with raw(db_path) as db:
        blobs = db.execute("SELECT * FROM blobs ORDER BY digest").fetchall()
    assert sorted(codec for _, _, codec, _ in blobs) == [CODEC_RAW, CODEC_ZLIB]

    async with open_sqlite(db_path) as store:
        after = await store.query(EventQuery())
        report = await store.verify()

    assert schema(db_path) == FINAL_SCHEMA
    assert [name for _, name, _ in recorded(db_path)[0]][2:] == [
        "m003_blobs_by_rowid",
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
    with raw(db_path) as db:
        assert db.execute("SELECT * FROM blobs ORDER BY digest").fetchall() == blobs
    assert after == before
    assert report.ok and report.events == 2


async def test_usage_recorded_before_the_usage_projection_is_in_it_after_the_upgrade(
    db_path: Path, open_sqlite: OpenSqlite, monkeypatch: pytest.MonkeyPatch
) -> None:
    usage = {"model": "claude-opus-4-6", "input_tokens": 10, "cache_read_tokens": 5000, "output_tokens": 70}
    with monkeypatch.context() as old_toka:  # a toka of the first five steps, which kept no usage projection
        as_older_toka(old_toka, 5)
        old_toka.setattr(sqlite_usage, "counted", lambda db, usage: [])
        old_toka.setattr(connect, "check_projections", lambda db: None)  # nor checked it at open
        async with open_sqlite(db_path) as store:
            await store.append([NewEvent("s1", "usage", usage, "main", T0), NewEvent("s1", "usage", usage, "main", T0)])
    async with open_sqlite(db_path) as store:
        [row] = await store.usage_rows()
    assert (row.session, row.agent, row.model, row.calls) == ("s1", "main", "claude-opus-4-6", 2)
    assert (row.input_tokens, row.cache_read_tokens, row.output_tokens) == (20, 10_000, 140)
    assert (row.bucket, row.first_ts, row.last_ts) == (T0, T0, T0)


async def test_a_request_an_older_toka_counted_twice_counts_once_after_the_upgrade(
    db_path: Path, open_sqlite: OpenSqlite, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Reported by a transcript and by telemetry, neither with a request id: a toka before m010
    # matched requests by id only, and counted both.
    transcript = {"model": "claude-opus-4-6", "input_tokens": 10, "cache_read_tokens": 5000, "output_tokens": 70}
    telemetry = transcript | {"origin": "telemetry"}
    with monkeypatch.context() as old_toka:
        as_older_toka(old_toka, 9)
        old_toka.setattr("store.usage.usage_names", lambda payload: NO_NAMES)
        async with open_sqlite(db_path) as store:
            await store.append([NewEvent("s1", "usage", transcript, "main", T0)])
            await store.append([NewEvent("s1", "usage", telemetry, "main", T0)])
            assert [row.calls for row in await store.usage_rows()] == [2]
    async with open_sqlite(db_path) as store:
        [row] = await store.usage_rows()
    assert (row.calls, row.telemetry_calls, row.output_tokens) == (1, 0, 70)


@pytest.mark.parametrize(
    "records",
    [["m999_future"], [m.__name__ for m in MIGRATIONS] + ["m999_later"]],
    ids=["unknown step", "more steps"],
)
async def test_a_database_from_a_newer_toka_is_refused_and_left_untouched(
    db_path: Path, open_sqlite: OpenSqlite, records: list[str]
) -> None:
    async with open_sqlite(db_path) as store:
        await store.append([NewEvent("s1", "message", {"text": "hi"})])
    with raw(db_path) as db:
        db.execute("DELETE FROM toka_migrations")
        for seq, name in enumerate(records, 1):
            db.execute("INSERT INTO toka_migrations VALUES (?, ?, '2030-01-01T00:00:00+00:00')", (seq, name))
    before = file_hash(db_path)
    files = sorted(p.name for p in db_path.parent.iterdir())

    with pytest.raises(SchemaTooNew) as raised:
        await SqliteStore.open(db_path)

    assert "newer toka" in raised.value.message
    assert raised.value.hint
    assert file_hash(db_path) == before
    assert sorted(p.name for p in db_path.parent.iterdir()) == files
    assert [name for _, name, _ in recorded(db_path)[0]] == records
