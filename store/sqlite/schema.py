"""Schema migrations for the SQLite backend.

An ordered list of small named functions, each applied in its own transaction and recorded in
``toka_migrations``; ``PRAGMA user_version`` mirrors the count so other tools can tell the
schema at a glance. A shipped migration is never edited: a change is a new function at the end.
A database that records a migration this toka does not know was written by a newer toka and is
refused before anything is written to it.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Callable
from datetime import UTC, datetime

from store.errors import SchemaTooNew, StoreError
from store.rows import transaction
from store.search import indexed_text


def m001_events(db: sqlite3.Connection) -> None:
    # Payloads live apart from headers, named by their blake3: the same payload is stored once.
    # codec 0 is the canonical JSON bytes as they are, 1 is those bytes zlib-compressed.
    db.execute(
        """CREATE TABLE blobs (
            digest TEXT PRIMARY KEY,
            size INTEGER NOT NULL,
            codec INTEGER NOT NULL,
            data BLOB NOT NULL
        ) WITHOUT ROWID"""
    )
    # parents is the comma-joined list of parent ids (64 hex digits each), in header order.
    db.execute(
        """CREATE TABLE events (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            session TEXT NOT NULL,
            agent TEXT,
            kind TEXT NOT NULL,
            ts INTEGER NOT NULL,
            parents TEXT NOT NULL,
            digest TEXT NOT NULL,
            key TEXT
        )"""
    )
    db.execute("CREATE INDEX events_session_seq ON events (session, seq)")
    db.execute("CREATE UNIQUE INDEX events_session_key ON events (session, key) WHERE key IS NOT NULL")


def m002_session_projections(db: sqlite3.Connection) -> None:
    # Projections of the log, rebuilt from it by `toka admin rebuild`; never the source of truth.
    db.execute(
        """CREATE TABLE sessions (
            session TEXT PRIMARY KEY,
            events INTEGER NOT NULL,
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            first_ts INTEGER NOT NULL,
            last_ts INTEGER NOT NULL,
            head TEXT NOT NULL
        ) WITHOUT ROWID"""
    )
    db.execute(
        """CREATE TABLE session_agents (
            session TEXT NOT NULL, agent TEXT NOT NULL, events INTEGER NOT NULL,
            PRIMARY KEY (session, agent)
        ) WITHOUT ROWID"""
    )
    db.execute(
        """CREATE TABLE session_kinds (
            session TEXT NOT NULL, kind TEXT NOT NULL, events INTEGER NOT NULL,
            PRIMARY KEY (session, kind)
        ) WITHOUT ROWID"""
    )


def m003_blobs_by_rowid(db: sqlite3.Connection) -> None:
    # The same columns in a rowid table. A WITHOUT ROWID table keeps whole rows in the b-tree it
    # sorts by digest, which pays for rows of a few hundred bytes at most; payloads run to
    # kilobytes, and a random digest order then moves so much data per insert that writing the
    # blobs of an import took three times as long as it does in a rowid table.
    db.execute("ALTER TABLE blobs RENAME TO blobs_without_rowid")
    db.execute(
        """CREATE TABLE blobs (
            digest TEXT PRIMARY KEY,
            size INTEGER NOT NULL,
            codec INTEGER NOT NULL,
            data BLOB NOT NULL
        )"""
    )
    db.execute("INSERT INTO blobs SELECT digest, size, codec, data FROM blobs_without_rowid")
    db.execute("DROP TABLE blobs_without_rowid")


def m004_search_index(db: sqlite3.Connection) -> None:
    # An FTS5 index with external content: the text of each event (store/search.py says which)
    # lives once, in search_text under the event's seq, and search_index holds only the inverted
    # index over it, reading search_text back by seq for snippets. A contentless index would be
    # smaller but cannot make snippets; an index with its own content would hold the same text
    # in a table of FTS5's making, which `INSERT ... ('rebuild')` could not refill from.
    try:
        db.execute("CREATE VIRTUAL TABLE temp.fts5_probe USING fts5(text)")
        db.execute("DROP TABLE temp.fts5_probe")
    except sqlite3.OperationalError as exc:
        raise StoreError(
            f"this Python's SQLite ({sqlite3.sqlite_version}) has no FTS5, which search needs ({exc})",
            "use a Python whose sqlite3 is built with FTS5 (python.org, Debian, Homebrew and uv builds all are)",
        ) from None
    db.execute("CREATE TABLE search_text (seq INTEGER PRIMARY KEY, text TEXT NOT NULL)")
    db.execute(
        "CREATE VIRTUAL TABLE search_index USING fts5(text, content='search_text', content_rowid='seq',"
        " tokenize='unicode61')"
    )
    rows = db.execute("SELECT e.seq, e.kind, b.codec, b.data FROM events e JOIN blobs b ON b.digest = e.digest")
    while batch := rows.fetchmany(1000):
        texts = []
        for seq, kind, codec, data in batch:
            try:
                payload = json.loads(zlib.decompress(data) if codec == 1 else data)
            except (ValueError, zlib.error):
                continue  # a damaged payload is for `toka verify` to report, not for search
            text = indexed_text(kind, payload) if isinstance(payload, dict) else None
            if text is not None:
                texts.append((seq, text))
        db.executemany("INSERT INTO search_text VALUES (?, ?)", texts)
    db.execute("INSERT INTO search_index (search_index) VALUES ('rebuild')")


def m005_pruned(db: sqlite3.Connection) -> None:
    # A tombstone per pruned event (store/retention.py): verify finds parents that were pruned
    # here and checks each checkpoint against the ids it replaced; keys and ids stay held.
    db.execute(
        """CREATE TABLE pruned (
            id TEXT PRIMARY KEY,
            session TEXT NOT NULL,
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL,
            key TEXT,
            checkpoint INTEGER NOT NULL
        ) WITHOUT ROWID"""
    )
    db.execute("CREATE INDEX pruned_checkpoint ON pruned (checkpoint, seq)")
    db.execute("CREATE UNIQUE INDEX pruned_session_key ON pruned (session, key) WHERE key IS NOT NULL")


def m006_usage_buckets(db: sqlite3.Connection) -> None:
    # The usage projection (store/usage.py): calls and tokens per quarter of an hour, session,
    # agent, model and prompt class, so that cost reports over a year of usage read thousands of
    # rows instead of every usage event's payload. Filled by each append, refilled by a rebuild
    # (an upgraded database is rebuilt when it opens); agent and model are "" when absent, so
    # the key has no NULLs for the upsert to miss.
    db.execute(
        """CREATE TABLE usage_buckets (
            bucket INTEGER NOT NULL,
            session TEXT NOT NULL,
            agent TEXT NOT NULL,
            model TEXT NOT NULL,
            prompt_class INTEGER NOT NULL,
            calls INTEGER NOT NULL,
            input_tokens INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            cache_creation_tokens INTEGER NOT NULL,
            cache_creation_1h_tokens INTEGER NOT NULL,
            cache_read_tokens INTEGER NOT NULL,
            first_ts INTEGER NOT NULL,
            last_ts INTEGER NOT NULL,
            PRIMARY KEY (bucket, session, agent, model, prompt_class)
        ) WITHOUT ROWID"""
    )
    db.execute("CREATE INDEX usage_buckets_session ON usage_buckets (session)")


def m007_merkle(db: sqlite3.Connection) -> None:
    # The log's Merkle tree (store/merkle.py, store/sqlite/tree.py): its stored hashes, a run
    # per append, ``start`` the number of the run's first hash and ``size`` the tree's leaves
    # after it. Filled from the log when the store opens. The tombstones are read by seq when
    # the tree is checked: a pruned event's leaf is its tombstone.
    db.execute("CREATE TABLE merkle (start INTEGER PRIMARY KEY, size INTEGER NOT NULL, hashes BLOB NOT NULL)")
    db.execute("CREATE INDEX pruned_seq ON pruned (seq)")


def m008_usage_requests(db: sqlite3.Connection) -> None:
    # A request reported by both an agent's transcript and its telemetry counts once, as its first
    # source reported it (store/usage.py): usage_requests holds that source per session and
    # request, and each bucket how many of its calls came from telemetry. Filled by each append
    # and by a rebuild (an upgraded database is rebuilt when it opens).
    db.execute("ALTER TABLE usage_buckets ADD COLUMN telemetry_calls INTEGER NOT NULL DEFAULT 0")
    db.execute(
        """CREATE TABLE usage_requests (
            session TEXT NOT NULL,
            request TEXT NOT NULL,
            origin TEXT NOT NULL,
            PRIMARY KEY (session, request)
        ) WITHOUT ROWID"""
    )


def m009_cursors(db: sqlite3.Connection) -> None:
    # Where a reader of the log that must survive restarts stands (store/cursors.py): the OTLP
    # forwarder (daemon/export/forwarder.py) keeps its position and what it holds open here, in
    # the database the log is in, so the two cannot disagree about which database they belong to.
    db.execute(
        """CREATE TABLE cursors (
            name TEXT PRIMARY KEY,
            value TEXT NOT NULL,
            updated_us INTEGER NOT NULL
        ) WITHOUT ROWID"""
    )


def m010_usage_claims_by_size(db: sqlite3.Connection) -> None:
    # A request is matched across sources by its model and prompt size too, when a source has no
    # request id (store/usage.py): the claims are made again from the log. The step clears them;
    # the rebuild an upgrade ends with (see migrate) makes them again, with the usage buckets.
    db.execute("DELETE FROM usage_requests")


def m011_search_merges(db: sqlite3.Connection) -> None:
    # FTS5 writes each commit's terms as a new segment and merges segments as it goes, by default
    # once 4 of a level exist. Merging at 16 takes about a quarter off the index's share of an
    # append, for a few more segments to read: a rare word's lookup goes from 0.04 to 0.08 ms, a
    # common word's stays at 1.7 ms (docs/benchmarks.md, "Search").
    db.execute("INSERT INTO search_index (search_index, rank) VALUES ('automerge', 16)")


def m012_last_active(db: sqlite3.Connection) -> None:
    # A session's last_ts is its last active time: the time of its latest event of the agent's
    # own activity, not of the handoffs, notes and other records toka appends (store/kinds.py).
    # Nothing changes shape: the rebuild an upgrade ends with (see migrate) recomputes it.
    del db


def m013_vectors(db: sqlite3.Connection) -> None:
    # Semantic recall's vectors (store/vectors.py, store/sqlite/vectors.py): the embedding of each
    # event worth recalling, as float32 bytes under the event's seq, made by the daemon after the
    # commit; which model made them and how far they reach is the cursor named "embeddings". A plain
    # table, so a Python that cannot load sqlite-vec still reads it.
    db.execute("CREATE TABLE vectors (seq INTEGER PRIMARY KEY, vector BLOB NOT NULL)")


def m014_projected(db: sqlite3.Connection) -> None:
    # The derived tables follow the log behind its commits (store/sqlite/projector.py): this
    # tracking record holds the last seq applied to them, moved in the transaction that applies
    # it. Every event so far was applied by the append that committed it.
    db.execute("CREATE TABLE projected (name TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID")
    db.execute("INSERT INTO projected SELECT 'tables', coalesce(max(seq), 0) FROM events")


def m015_inline_payloads(db: sqlite3.Connection) -> None:
    # A payload shorter than store/rows.py's INLINE_BELOW is kept in its event's row, its canonical
    # JSON bytes as they are; NULL when it is in ``blobs``. A one-event commit then writes the
    # events b-tree alone instead of blobs and events: in raw SQLite (WAL, synchronous NORMAL)
    # 3.85 WAL frames and 47 us of CPU per commit instead of 6.40 and 68 us. The events already
    # written keep their payloads in ``blobs``; only new appends go inline.
    db.execute("ALTER TABLE events ADD COLUMN payload BLOB")


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    m001_events,
    m002_session_projections,
    m003_blobs_by_rowid,
    m004_search_index,
    m005_pruned,
    m006_usage_buckets,
    m007_merkle,
    m008_usage_requests,
    m009_cursors,
    m010_usage_claims_by_size,
    m011_search_merges,
    m012_last_active,
    m013_vectors,
    m014_projected,
    m015_inline_payloads,
]


def applied(db: sqlite3.Connection) -> list[str]:
    """Names of the migrations recorded in ``db``; raises when it is not a toka database."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "toka_migrations" not in tables:
        if tables:
            raise StoreError(
                "the database file holds tables but is not a toka database",
                "point TOKA_HOME (or the data dir) elsewhere; toka leaves this file as it is",
            )
        return []
    return [row[0] for row in db.execute("SELECT name FROM toka_migrations ORDER BY seq")]


def check_not_newer(done: list[str]) -> None:
    known = [m.__name__ for m in MIGRATIONS]
    unknown = [name for name in done if name not in known]
    if unknown or len(done) > len(known):
        raise SchemaTooNew(
            f"the database was written by a newer toka (schema step {unknown[0] if unknown else len(done)})",
            "upgrade toka (pip install -U toka); the database was left untouched",
        )


def migrate(db: sqlite3.Connection, project: Callable[[sqlite3.Connection], None] | None = None) -> list[str]:
    """Apply what is missing, each step in its own transaction; returns the names applied.

    ``project`` refills the projections from the log. It runs in the transaction of the last
    step, when the database had steps applied before (a blank one has no log to project): an
    upgrade that adds or changes a projection then commits together with the projection filled,
    and one stopped before its end (a kill, a full disk) is done again, rebuild included, at the
    next open. Steps before the last may commit on their own: the last one always rebuilds.
    """
    done = applied(db)
    check_not_newer(done)
    if not done:
        db.execute(
            "CREATE TABLE IF NOT EXISTS toka_migrations"
            " (seq INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at TEXT NOT NULL)"
        )
    missing = [(number, step) for number, step in enumerate(MIGRATIONS, 1) if step.__name__ not in done]
    for number, step in missing:
        with transaction(db):
            step(db)
            db.execute(
                "INSERT INTO toka_migrations (seq, name, applied_at) VALUES (?, ?, ?)",
                (number, step.__name__, datetime.now(UTC).isoformat()),
            )
            db.execute(f"PRAGMA user_version = {number}")
            if project is not None and done and number == missing[-1][0]:
                project(db)
    return [step.__name__ for _, step in missing]
