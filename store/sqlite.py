"""The SQLite backend: one WAL database file, written through aiosqlite.

Every operation is one plain function run on the connection's own thread, so a batch of a
thousand events costs one thread hop, not a thousand: aiosqlite's public methods each cost a
hop, and the write path here would need ten of them per batch. There are two connections, so
a long read (replay, verify) never holds up appends: WAL lets the reader see a consistent
snapshot while the writer commits.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sqlite3
import zlib
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

import aiosqlite

from store.base import (
    CHUNK,
    AppendResult,
    ChainVerifier,
    EventQuery,
    EventStore,
    ProgressCallback,
    SealedEvent,
    Sealer,
    SessionInfo,
    Stats,
    VerifyReport,
    resolve_prefix,
)
from store.errors import NotFound, StoreError, TokaError, UsageError
from store.events import Event, NewEvent
from store.migrations import applied, check_not_newer, migrate
from store.query import where_clause
from store.retention import Collected, Pruned
from store.rows import (
    CODEC_RAW,
    CODEC_ZLIB,
    JSON_LIST,
    SELECT,
    decode_blob,
    event_of,
    event_text,
    stored_row,
    transaction,
)
from store.search import ELLIPSIS, MARK_END, MARK_START, SNIPPET_TOKENS, SearchHit, SearchQuery, indexed_text
from store.sqlite_retention import collect_garbage, project_sessions, prune_session, pruned_seq, replaced_ids

T = TypeVar("T")
Durability = Literal["normal", "full"]

# Payloads at least this large are zlib-compressed when that makes them smaller: below it the
# saving is a few bytes and the cost a few microseconds per event.
COMPRESS_FROM = 1024
BUSY_TIMEOUT_MS = 5000
# The writer's page cache (SQLite's default is 2 MiB): every append inserts into the id and
# key indexes at random places, and each page of them not in the cache is read again. Memory
# is taken only as the database grows.
WRITER_CACHE_KIB = 32 * 1024
# WAL size at which a background checkpoint starts: SQLite's own default, 1000 pages of 4 KiB;
# the size the file is cut back to when it starts over; and the size at which the writer stops
# waiting for the background checkpoint to catch up and checkpoints itself.
CHECKPOINT_WAL_BYTES = 4 * 1024 * 1024
WAL_KEEP_BYTES = 1024 * 1024
CATCH_UP_WAL_BYTES = 16 * 1024 * 1024
WAL_LOOK_EVERY = 32


def _fetch_json(db: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[tuple[int, str]]:
    return [(row[0], event_text(row)) for row in db.execute(sql, params)]


def _describe(path: Path, exc: sqlite3.Error) -> StoreError:
    text = str(exc)
    if "not a database" in text or "malformed" in text:
        return StoreError(
            f"{path} is not a readable toka database ({text})",
            "move the file aside (toka never overwrites it) or point TOKA_HOME elsewhere",
        )
    if "readonly" in text or "unable to open" in text or "disk I/O" in text:
        return StoreError(
            f"cannot write the database at {path} ({text})",
            "check that the data directory exists and is writable, or set TOKA_HOME",
        )
    if "full" in text:
        return StoreError(f"the disk holding {path} is full ({text})", "free some space and retry")
    return StoreError(f"database error on {path}: {text}")


class SqliteStore(EventStore):
    def __init__(
        self,
        path: Path,
        writer: aiosqlite.Connection,
        reader: aiosqlite.Connection,
        checkpointer: aiosqlite.Connection,
    ) -> None:
        self.path = path
        self._writer = writer
        self._reader = reader
        self._checkpointer = checkpointer
        self._wal = Path(f"{path}-wal")
        self._checkpointing: asyncio.Task[None] | None = None
        self._appends = 0

    @property
    def location(self) -> str:
        return str(self.path)

    @classmethod
    async def open(cls, path: Path | str, durability: Durability = "normal") -> SqliteStore:
        path = Path(path)
        if not path.parent.is_dir():
            raise StoreError(f"the data directory {path.parent} does not exist", "create it or set TOKA_HOME")
        connections: list[aiosqlite.Connection] = []
        try:
            for role in ("writer", "reader", "checkpointer"):
                try:
                    conn = await aiosqlite.connect(path, isolation_level=None, check_same_thread=False)
                except sqlite3.Error as exc:  # a directory, a file we may not open, ...
                    raise _describe(path, exc) from None
                connections.append(conn)
                prepare = _prepare_writer if role == "writer" else _prepare_reader
                await _run(conn, path, prepare, durability)
        except BaseException:
            for conn in connections:
                await conn.close()
            raise
        return cls(path, *connections)

    async def _write(self, fn: Callable[..., T], *args: Any) -> T:
        return await _run(self._writer, self.path, fn, *args)

    async def _read(self, fn: Callable[..., T], *args: Any) -> T:
        return await _run(self._reader, self.path, fn, *args)

    async def append(self, batch: Sequence[NewEvent]) -> list[AppendResult]:
        wal_bytes = self._wal_bytes()
        results = await self._write(_append, list(batch), wal_bytes >= CATCH_UP_WAL_BYTES)
        if wal_bytes >= CHECKPOINT_WAL_BYTES:
            self._checkpoint_in_background()
        return results

    def _wal_bytes(self) -> int:
        """The WAL's size, looked at every WAL_LOOK_EVERY appends (a stat costs a syscall)."""
        self._appends += 1
        if self._appends % WAL_LOOK_EVERY:
            return 0
        try:
            return self._wal.stat().st_size
        except FileNotFoundError:
            return 0

    def _checkpoint_in_background(self) -> None:
        """Copy the WAL back into the database on a connection of its own.

        SQLite's automatic checkpoint (off on the writer) runs inside whichever commit crosses
        its threshold, fsyncs included, and makes that append a hundred times slower than the
        rest. A PASSIVE checkpoint on another connection never blocks the writer, and once it
        has copied everything the writer starts the WAL from the top again. Under a write load
        that never pauses it may never catch up, so past CATCH_UP_WAL_BYTES the writer runs one
        checkpoint itself before its next transaction (see ``_append``).
        """
        if self._checkpointing is None or self._checkpointing.done():
            self._checkpointing = asyncio.create_task(self._checkpoint("PASSIVE"), name="wal-checkpoint")

    async def _checkpoint(self, mode: str) -> None:
        try:
            await _run(self._checkpointer, self.path, _wal_checkpoint, mode)
        except TokaError as exc:  # the next append tries again; the commits themselves are safe
            logging.getLogger("toka.store").warning("WAL checkpoint failed: %s", exc.message)

    async def get(self, event_id: str) -> Event:
        return await self._read(_get, event_id)

    async def payload(self, digest: str) -> tuple[str, dict[str, Any]]:
        return await self._read(_payload, digest)

    async def get_by_seq(self, seq: int) -> Event:
        rows = await self._read(_fetch, SELECT + " WHERE e.seq = ?", [seq])
        if not rows:
            raise NotFound(f"no event at seq {seq}", "seqs start at 1; see `toka events SESSION`")
        return event_of(rows[0])

    async def query(self, query: EventQuery) -> list[Event]:
        sql, params = where_clause(query)
        return [event_of(row) for row in await self._read(_fetch, SELECT + sql, params)]

    async def query_json(self, query: EventQuery) -> list[tuple[int, str]]:
        sql, params = where_clause(query)
        return await self._read(_fetch_json, SELECT + sql, params)

    async def sessions(self) -> list[SessionInfo]:
        return await self._read(_sessions, None)

    async def session(self, name: str) -> SessionInfo:
        return (await self._read(_sessions, name))[0]

    async def replay(self, session: str, to_seq: int | None = None) -> AsyncIterator[Event]:
        after = 0
        while True:
            query = EventQuery(session=session, after_seq=after, limit=CHUNK)
            sql, params = where_clause(query)
            if to_seq is not None:
                sql = sql.replace(" ORDER BY", " AND e.seq <= ? ORDER BY")
                params.insert(-1, to_seq)
            rows = await self._read(_fetch, SELECT + sql, params)
            for row in rows:
                yield event_of(row)
            if len(rows) < CHUNK:
                return
            after = rows[-1][0]

    async def verify(self, session: str | None = None, progress: ProgressCallback | None = None) -> VerifyReport:
        report_progress = None
        if progress is not None:
            loop = asyncio.get_running_loop()
            report_progress = lambda done, total: loop.call_soon_threadsafe(progress, done, total)  # noqa: E731
        return await self._read(_verify, session, report_progress)

    async def stats(self) -> Stats:
        return await self._read(_stats, self.path)

    async def disk_bytes(self) -> int:
        return _disk_bytes(self.path)

    async def rebuild_projections(self) -> int:
        return await self._write(_rebuild)

    async def search(self, query: SearchQuery) -> list[SearchHit]:
        sql, params = _search_sql(query.checked())
        return await self._read(_search, query.text, sql, params)

    async def rebuild_search_index(self) -> int:
        return await self._write(_rebuild_search)

    async def prune(self, session: str, before: int, dry_run: bool = False) -> Pruned | None:
        return await self._write(prune_session, session, before, dry_run)

    async def collect_garbage(self, keep: Sequence[str] = (), dry_run: bool = False) -> Collected:
        return await self._write(collect_garbage, list(keep), dry_run)

    async def vacuum(self) -> None:
        await self._write(lambda db: db.execute("VACUUM"))
        await self.checkpoint()  # VACUUM writes the whole file through the WAL

    async def checkpoint(self) -> None:
        await self._write(lambda db: db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())

    async def close(self) -> None:
        try:
            if self._checkpointing is not None:
                await self._checkpointing
            await self.checkpoint()
        except TokaError:
            pass  # a full disk or read-only file must not keep the daemon from stopping
        finally:
            for conn in (self._checkpointer, self._reader, self._writer):
                await conn.close()


async def _run(conn: aiosqlite.Connection, path: Path, fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn(sqlite3_connection, *args)`` on the connection's thread: one hop per call.

    aiosqlite queues every public call the same way through ``_execute``; calling it with our own
    function is what lets a whole batch share one hop.
    """
    try:
        result: T = await conn._execute(fn, conn._conn, *args)  # type: ignore[no-untyped-call]
        return result
    except sqlite3.Error as exc:
        raise _describe(path, exc) from None


def _check_database(db: sqlite3.Connection) -> list[str]:
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    done = applied(db)  # reads sqlite_master: fails here, before any write, on a non-database
    check_not_newer(done)
    return done


def _wal_checkpoint(db: sqlite3.Connection, mode: str) -> None:
    db.execute(f"PRAGMA wal_checkpoint({mode})").fetchall()


def _prepare_writer(db: sqlite3.Connection, durability: Durability) -> None:
    done = _check_database(db)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA wal_autocheckpoint = 0")  # see SqliteStore._checkpoint_in_background
    # When the WAL starts over, cut the file back, so that its size says how much it holds.
    db.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}")
    db.execute(f"PRAGMA synchronous = {'FULL' if durability == 'full' else 'NORMAL'}")
    db.execute(f"PRAGMA cache_size = -{WRITER_CACHE_KIB}")
    if migrate(db) and done:
        # An upgraded database may hold events that a projection table added by the upgrade has
        # never seen: rebuild them all from the log, or sessions and heads would start empty.
        _rebuild(db)


def _prepare_reader(db: sqlite3.Connection, durability: Durability) -> None:
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    db.execute("PRAGMA query_only = ON")


def _fetch(db: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[Any]:
    return db.execute(sql, params).fetchall()


def _append(db: sqlite3.Connection, batch: list[NewEvent], catch_up: bool) -> list[AppendResult]:
    if catch_up:
        _wal_checkpoint(db, "PASSIVE")
    with transaction(db):
        next_seq = db.execute("SELECT coalesce(max(seq), 0) + 1 FROM events").fetchone()[0]

        def head_of(session: str) -> str | None:
            row = db.execute("SELECT head FROM sessions WHERE session = ?", (session,)).fetchone()
            return row[0] if row else None

        def by_id(event_id: str) -> Event | None:
            row = db.execute(SELECT + " WHERE e.id = ?", (event_id,)).fetchone()
            if row is None:  # an event pruned away is held by the checkpoint that replaced it
                sql = SELECT + " JOIN pruned p ON p.checkpoint = e.seq WHERE p.id = ?"
                row = db.execute(sql, (event_id,)).fetchone()
            return event_of(row) if row else None

        held = _held_keys(db, batch)
        sealer = Sealer(next_seq, head_of, lambda s, k: held.get((s, k)), by_id)
        results = sealer.seal_all(batch)
        if sealer.sealed:
            _write_blobs(db, sealer.sealed)
            db.executemany(
                "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (e.seq, e.id, e.session, e.agent, e.kind, e.ts, ",".join(e.parents), e.digest, e.key)
                    for e in (s.event for s in sealer.sealed)
                ],
            )
            _index(db, [s.event for s in sealer.sealed])
            _project(db, [s.event for s in sealer.sealed])
    return results


def _held_keys(db: sqlite3.Connection, batch: list[NewEvent]) -> dict[tuple[str, str], Event]:
    """The committed events that hold the batch's idempotency keys, by (session, key): one
    query per session of the batch instead of one per event."""
    keys: dict[str, list[str]] = defaultdict(list)
    for new in batch:
        if new.key is not None:
            keys[new.session].append(new.key)
    held = {}
    for session, names in keys.items():
        rows = db.execute(SELECT + " WHERE e.session = ? AND e.key IN " + JSON_LIST, (session, json.dumps(names)))
        for row in rows:
            held[(session, row[8])] = event_of(row)
        # A key of an event pruned away is held by the checkpoint that replaced it.
        pruned = db.execute(
            "SELECT p.key, " + SELECT.removeprefix("SELECT ") + " JOIN pruned p ON p.checkpoint = e.seq"
            " WHERE p.session = ? AND p.key IN " + JSON_LIST,
            (session, json.dumps(names)),
        )
        for key, *row in pruned:
            held[(session, key)] = event_of(row)
    return held


def _write_blobs(db: sqlite3.Connection, sealed: list[SealedEvent]) -> None:
    # Large payloads stored already are left out before they are compressed for nothing.
    large = [item.event.digest for item in sealed if len(item.payload_bytes) >= COMPRESS_FROM]
    sql = "SELECT digest FROM blobs WHERE digest IN " + JSON_LIST
    stored_already = {row[0] for row in db.execute(sql, (json.dumps(large),))}
    rows = {}
    for item in sealed:
        name, data = item.event.digest, item.payload_bytes
        if name in rows or name in stored_already:
            continue
        codec, stored = CODEC_RAW, data
        if len(data) >= COMPRESS_FROM:
            packed = zlib.compress(data, 6)
            if len(packed) < len(data):
                codec, stored = CODEC_ZLIB, packed
        rows[name] = (name, len(data), codec, stored)
    db.executemany("INSERT OR IGNORE INTO blobs VALUES (?, ?, ?, ?)", rows.values())


def _project(db: sqlite3.Connection, events: list[Event]) -> None:
    """Fold one batch into the session tables: one upsert per session, agent and kind."""
    sessions: dict[str, list[Any]] = {}
    agents: dict[tuple[str, str], int] = defaultdict(int)
    kinds: dict[tuple[str, str], int] = defaultdict(int)
    for e in events:
        row = sessions.get(e.session)
        if row is None:
            sessions[e.session] = [e.session, 1, e.seq, e.seq, e.ts, e.ts, e.id]
        else:
            row[1] += 1
            row[3] = e.seq
            row[4] = min(row[4], e.ts)
            row[5] = max(row[5], e.ts)
            row[6] = e.id
        if e.agent is not None:
            agents[(e.session, e.agent)] += 1
        kinds[(e.session, e.kind)] += 1
    db.executemany(  # one row per session of the batch; agents and kinds only when there are any
        """INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session) DO UPDATE SET
            events = events + excluded.events, last_seq = excluded.last_seq,
            first_ts = min(first_ts, excluded.first_ts), last_ts = max(last_ts, excluded.last_ts),
            head = excluded.head""",
        sessions.values(),
    )
    for table, column, counts in (("session_agents", "agent", agents), ("session_kinds", "kind", kinds)):
        if not counts:
            continue
        db.executemany(
            f"INSERT INTO {table} VALUES (?, ?, ?) ON CONFLICT (session, {column})"
            " DO UPDATE SET events = events + excluded.events",
            [(s, name, n) for (s, name), n in counts.items()],
        )


def _rebuild(db: sqlite3.Connection) -> int:
    with transaction(db):
        project_sessions(db)
        count: int = db.execute("SELECT count(*) FROM sessions").fetchone()[0]
    return count


def _index(db: sqlite3.Connection, events: list[Event]) -> None:
    """Add the batch's text to the search index, inside the append's transaction: an event is
    searchable exactly when it is committed."""
    texts = []
    for event in events:
        text = indexed_text(event.kind, event.payload)
        if text is not None:
            texts.append((event.seq, text))
    if texts:
        db.executemany("INSERT INTO search_text VALUES (?, ?)", texts)
        db.executemany("INSERT INTO search_index (rowid, text) VALUES (?, ?)", texts)


def _rebuild_search(db: sqlite3.Connection) -> int:
    with transaction(db):
        db.execute("DELETE FROM search_text")
        rows = db.execute(SELECT + " ORDER BY e.seq")
        while batch := rows.fetchmany(CHUNK):
            texts = []
            for row in batch:
                try:
                    event = event_of(row)
                except StoreError:
                    continue  # a damaged payload is for `toka verify` to report, not for search
                text = indexed_text(event.kind, event.payload)
                if text is not None:
                    texts.append((event.seq, text))
            db.executemany("INSERT INTO search_text VALUES (?, ?)", texts)
        # FTS5 reads its external content table afresh: the index then holds exactly search_text.
        db.execute("INSERT INTO search_index (search_index) VALUES ('rebuild')")
        count: int = db.execute("SELECT count(*) FROM search_text").fetchone()[0]
    return count


_SEARCH = (
    # rank is the bm25() FTS5 sorts by, negated so that a higher score is a better match.
    "SELECT e.seq, e.id, e.session, e.agent, e.kind, e.ts, e.digest, -search_index.rank,"
    f" snippet(search_index, 0, '{MARK_START}', '{MARK_END}', '{ELLIPSIS}', {SNIPPET_TOKENS})"
    " FROM search_index JOIN events e ON e.seq = search_index.rowid WHERE search_index MATCH ?"
)


def _search_sql(query: SearchQuery) -> tuple[str, list[Any]]:
    """The statement of a search: FTS5 finds and ranks; the event's columns narrow it down."""
    narrowing = EventQuery(session=query.session, kinds=query.kinds, since=query.since, until=query.until)
    sql, params = where_clause(narrowing)
    filters = sql.split(" ORDER BY")[0].replace(" WHERE ", " AND ", 1)
    if query.agent is not None:
        filters += " AND e.agent = ?"
        params.append(query.agent)
    # ORDER BY rank is sorted inside FTS5, so SQLite makes snippets for the rows it returns only.
    return _SEARCH + filters + " ORDER BY search_index.rank LIMIT ?", [query.text, *params, query.limit]


def _search(db: sqlite3.Connection, text: str, sql: str, params: list[Any]) -> list[SearchHit]:
    try:
        rows = db.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        detail = str(exc)
        if "fts5" in detail or "syntax error" in detail or "no such column" in detail or "unterminated" in detail:
            raise UsageError(
                f"cannot read the search query {text!r}: {detail.removeprefix('fts5: ')}",
                'put words with punctuation in double quotes ("login-timeout"); operators are AND, OR, NOT,'
                " NEAR(), a trailing * for a prefix; see docs/search.md",
            ) from None
        raise
    return [SearchHit(*row) for row in rows]


def _get(db: sqlite3.Connection, event_id: str) -> Event:
    prefix = event_id.lower()
    rows = db.execute(SELECT + " WHERE e.id = ?", (prefix,)).fetchall()
    if not rows and prefix and all(c in "0123456789abcdef" for c in prefix):
        # Every id is lowercase hex, so the ids starting with a prefix sort between it and
        # the prefix followed by 'g': a range scan on the unique index.
        rows = db.execute(SELECT + " WHERE e.id >= ? AND e.id < ? LIMIT 6", (prefix, prefix + "g")).fetchall()
    by_id = {row[1]: row for row in rows}
    return event_of(by_id[resolve_prefix(event_id, list(by_id), "event")])


def _payload(db: sqlite3.Connection, digest: str) -> tuple[str, dict[str, Any]]:
    prefix = digest.lower()
    rows = []
    if prefix and all(c in "0123456789abcdef" for c in prefix):  # digests are lowercase hex: a range scan
        rows = db.execute(
            "SELECT digest, codec, data FROM blobs WHERE digest >= ? AND digest < ? LIMIT 6", (prefix, prefix + "g")
        ).fetchall()
    by_digest = {row[0]: row for row in rows}
    found = by_digest[resolve_prefix(digest, list(by_digest), "payload")]
    try:
        return found[0], json.loads(decode_blob(found[1], found[2]))
    except (ValueError, zlib.error) as exc:
        raise StoreError(f"payload {found[0][:12]} is unreadable: {exc}", "run `toka verify`") from None


def _sessions(db: sqlite3.Connection, name: str | None) -> list[SessionInfo]:
    if name is None:
        rows = db.execute("SELECT * FROM sessions ORDER BY last_seq DESC").fetchall()
    else:
        rows = db.execute("SELECT * FROM sessions WHERE session = ?", (name,)).fetchall()
        if not rows:
            rows = db.execute(
                "SELECT * FROM sessions WHERE substr(session, 1, ?) = ? LIMIT 6", (len(name), name)
            ).fetchall()
            found = {row[0]: row for row in rows}
            rows = [found[resolve_prefix(name, list(found), "session")]]
    agents: dict[str, dict[str, int]] = defaultdict(dict)
    kinds: dict[str, dict[str, int]] = defaultdict(dict)
    for table, into in (("session_agents", agents), ("session_kinds", kinds)):
        sql = f"SELECT * FROM {table}"
        params: tuple[str, ...] = ()
        if name is not None:
            sql += " WHERE session = ?"
            params = (rows[0][0],)
        for session, item, count in db.execute(sql + " ORDER BY events DESC", params):
            into[session][item] = count
    return [
        SessionInfo(
            session=row[0],
            events=row[1],
            first_seq=row[2],
            last_seq=row[3],
            first_ts=row[4],
            last_ts=row[5],
            head=row[6],
            agents=agents[row[0]],
            kinds=kinds[row[0]],
        )
        for row in rows
    ]


def _verify(db: sqlite3.Connection, session: str | None, progress: ProgressCallback | None) -> VerifyReport:
    def seq_of(event_id: str) -> int | None:
        row = db.execute("SELECT seq FROM events WHERE id = ?", (event_id,)).fetchone()
        return row[0] if row else pruned_seq(db, event_id)

    verifier = ChainVerifier(seq_of, lambda seq: replaced_ids(db, seq))
    where, params = ("", []) if session is None else (" WHERE e.session = ?", [session])
    total = db.execute("SELECT count(*) FROM events e" + where, params).fetchone()[0]
    for done, row in enumerate(db.execute(SELECT + where + " ORDER BY e.seq", params), 1):
        verifier.check(stored_row(row))
        if progress is not None and done % CHUNK == 0:
            progress(done, total)
    heads = db.execute("SELECT session, head FROM sessions" + where.replace("e.", ""), params)
    verifier.check_heads(heads.fetchall())
    if progress is not None:
        progress(total, total)
    return verifier.report(session)


def _stats(db: sqlite3.Connection, path: Path) -> Stats:
    events, sessions = db.execute("SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM sessions)").fetchone()
    payload_bytes = db.execute(
        "SELECT coalesce(sum(b.size), 0) FROM events e JOIN blobs b ON b.digest = e.digest"
    ).fetchone()[0]
    blobs, blob_bytes, stored_bytes = db.execute(
        "SELECT count(*), coalesce(sum(size), 0), coalesce(sum(length(data)), 0) FROM blobs"
    ).fetchone()
    return Stats(events, sessions, blobs, payload_bytes, blob_bytes, stored_bytes, _disk_bytes(path))


def _disk_bytes(path: Path) -> int:
    """The database file and its WAL and shared-memory files, in bytes."""
    return sum(os.path.getsize(f) for f in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if os.path.exists(f))
