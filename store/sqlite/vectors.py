"""The SQLite backend's vectors (store/vectors.py): one float32 blob per embedded event in the
table ``vectors`` (migration ``m013_vectors``), the embedder's cursor in ``cursors``.

Nearest neighbours are exact: every vector the filters leave is compared with the query's. A
search of the whole log (not narrowed to a session, an agent or a time) compares a matrix of every
vector held in memory (store/sqlite/vector_cache.py). A narrowed one reads the vectors its filters
leave: with the ``sqlite-vec`` extension loaded (its ``vec_distance_cosine`` runs inside the query) the
comparison is SQLite's; a Python whose ``sqlite3`` cannot load extensions (``enable_load_extension``
is left out of some builds, macOS's system Python among them) compares the same blobs with numpy,
a chunk of rows at a time. Both give the same neighbours. The searches run on the searches'
connection (store/sqlite/searcher.py), never on the reader's.
"""

from __future__ import annotations

import importlib.util
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any

from store.cursors import SAVE, read_cursor
from store.events import now_us
from store.query import narrowing_terms
from store.rows import transaction
from store.search import SearchQuery
from store.sqlite.vector_cache import Matrix, nearest_in
from store.vectors import CURSOR, VectorHit, VectorIndex, VectorState, read_state

log = logging.getLogger("toka.store")

# Rows compared per numpy step: a few MB of vectors at 256 dimensions.
CHUNK_ROWS = 4096

SELECT_HITS = (
    "SELECT e.seq, e.id, e.session, e.agent, e.kind, e.ts, e.digest, {score}"
    " FROM vectors v JOIN events e ON e.seq = v.seq WHERE 1 = 1"
)


def load_sqlite_vec(db: sqlite3.Connection) -> bool:
    """Load sqlite-vec into ``db``; False when this Python's sqlite3 cannot load extensions or the
    package is not installed (numpy then compares the vectors)."""
    if not hasattr(db, "enable_load_extension"):
        return False
    try:
        import sqlite_vec
    except ImportError:
        return False
    try:
        db.enable_load_extension(True)
        sqlite_vec.load(db)
        db.enable_load_extension(False)
    except sqlite3.Error as exc:
        log.warning("sqlite-vec did not load (%s): vectors are compared with numpy", exc)
        return False
    return True


def vector_state(db: sqlite3.Connection) -> VectorState:
    count: int = db.execute("SELECT count(*) FROM vectors").fetchone()[0]
    return read_state(read_cursor(db, CURSOR), count)


def add_vectors(db: sqlite3.Connection, rows: list[tuple[int, bytes]], state: VectorState) -> None:
    """The batch and the cursor after it, in one transaction (the writer connection autocommits)."""
    with transaction(db):
        db.executemany("INSERT OR REPLACE INTO vectors (seq, vector) VALUES (?, ?)", rows)
        db.execute(SAVE, (CURSOR, state.cursor_value(), now_us()))


def clear_vectors(db: sqlite3.Connection, model: str) -> None:
    """No vectors, and the cursor at the start of the log for ``model``."""
    with transaction(db):
        db.execute("DELETE FROM vectors")
        db.execute(SAVE, (CURSOR, VectorState(model, 0, 0).cursor_value(), now_us()))


def nearest(db: sqlite3.Connection, vector: bytes, query: SearchQuery, with_extension: bool) -> list[VectorHit]:
    """The ``query.limit`` nearest events that the query's filters leave, nearest first."""
    filters, params = narrowing_terms(query)
    if with_extension:
        sql = (
            SELECT_HITS.format(score="1 - vec_distance_cosine(v.vector, ?)")
            + filters
            + " ORDER BY 8 DESC, e.seq LIMIT ?"
        )
        rows = db.execute(sql, [vector, *params, query.limit]).fetchall()
    else:
        rows = _nearest_numpy(db, vector, filters, params, query.limit)
    texts = _texts(db, [row[0] for row in rows])
    return [
        VectorHit(seq, event_id, session, agent, kind, ts, digest, float(score), texts.get(seq, ""))
        for seq, event_id, session, agent, kind, ts, digest, score in rows
    ]


def _nearest_numpy(db: sqlite3.Connection, vector: bytes, filters: str, params: list[Any], limit: int) -> list[Any]:
    import numpy as np

    wanted = np.frombuffer(vector, dtype="<f4")
    sql = SELECT_HITS.format(score="v.vector") + filters
    best: list[tuple[float, tuple[Any, ...]]] = []
    rows = db.execute(sql, params)
    while chunk := rows.fetchmany(CHUNK_ROWS):
        matrix = np.frombuffer(b"".join(row[7] for row in chunk), dtype="<f4").reshape(len(chunk), -1)
        scores = matrix @ wanted
        top = np.argsort(-scores, kind="stable")[:limit]
        best.extend((float(scores[i]), chunk[i][:7]) for i in top)
        best.sort(key=lambda pair: (-pair[0], pair[1][0]))
        del best[limit:]
    return [(*head, score) for score, head in best]


def _texts(db: sqlite3.Connection, seqs: list[int]) -> dict[int, str]:
    if not seqs:
        return {}
    marks = ", ".join("?" * len(seqs))
    return dict(db.execute(f"SELECT seq, text FROM search_text WHERE seq IN ({marks})", seqs).fetchall())


Run = Callable[..., Awaitable[Any]]


class SqliteVectors(VectorIndex):
    """The index as the store runs it: writes on the writer's connection, the state on the
    reader's, nearest neighbours on the searches' (``write``, ``read``, ``search`` run a function of
    a connection on it)."""

    def __init__(self, write: Run, read: Run, search: Run, project: Callable[[], Awaitable[None]]) -> None:
        self._write, self._read, self._search = write, read, search
        # A hit's text is the search index's, which follows the log behind its commits: a search
        # has the store apply what is waiting first, as a search by words does.
        self._project = project
        self._extension: bool | None = None  # sqlite-vec loaded on the searches' connection
        # Every vector in memory, for searches of the whole log (store/sqlite/vector_cache.py):
        # read at the first, grown by each add (as the file is written), dropped by a clear.
        self._matrix: Matrix | None = None
        self._changes = 0  # adds and clears: a matrix read while one ran is not kept

    @property
    def method(self) -> str:
        if self._extension is None:
            return "sqlite-vec" if _can_load() else "numpy"
        return "sqlite-vec" if self._extension else "numpy"

    async def state(self) -> VectorState:
        state: VectorState = await self._read(vector_state)
        return state

    async def add(self, rows: list[tuple[int, bytes]], state: VectorState) -> None:
        await self._write(add_vectors, rows, state)
        self._changes += 1
        if self._matrix is not None and rows:
            self._matrix = self._matrix.grown(rows)

    async def clear(self, model: str) -> None:
        self._matrix = None
        self._changes += 1
        await self._write(clear_vectors, model)

    async def nearest(self, vector: bytes, query: SearchQuery) -> list[VectorHit]:
        await self._project()
        if query.session is None and query.agent is None and query.since is None and query.until is None:
            matrix, changes = self._matrix, self._changes
            if matrix is None:
                matrix = await self._search(Matrix.read)
                if changes == self._changes:
                    self._matrix = matrix
            hits_in: list[VectorHit] = await self._search(nearest_in, matrix, vector, query)
            return hits_in

        def run(db: sqlite3.Connection) -> list[VectorHit]:
            if self._extension is None:
                self._extension = load_sqlite_vec(db)
            return nearest(db, vector, query, self._extension)

        hits: list[VectorHit] = await self._search(run)
        return hits


def _can_load() -> bool:
    """Whether sqlite-vec would load here (before the first search has loaded it)."""
    return hasattr(sqlite3.Connection, "enable_load_extension") and importlib.util.find_spec("sqlite_vec") is not None
