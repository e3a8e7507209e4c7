"""The PostgreSQL backend's vectors (store/vectors.py): pgvector's ``vector`` type in the table
``vectors``, the embedder's cursor in ``cursors``.

pgvector is a server extension, installed with the server (Debian and Ubuntu:
``postgresql-NN-pgvector``; the official Docker image ``pgvector/pgvector``). A server without it
still keeps toka's log: the table is made on the first use of semantic recall, not by a migration,
so that a database whose server lacks the extension migrates and runs as before, and semantic
recall says what to install (:data:`NO_PGVECTOR`). ``CREATE EXTENSION vector`` is run then too;
on a managed server where the role may not create it, a superuser runs it once, and a role that may
not create tables is given the table by the database's owner; semantic recall says which.

Nearest neighbours are exact, as on SQLite: ``ORDER BY vector <=> query`` over what the filters
leave, with no approximate index, so both backends answer the same events; the events' columns
and text are joined to the nearest only. The vectors are passed as pgvector's text form
(``[0.1,0.2,...]``), so no adapter needs registering on the connection; the searches run on the
searcher's connection.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from psycopg import AsyncConnection, errors

from store.cursors import READ as READ_CURSOR
from store.cursors import SAVE as SAVE_CURSOR
from store.errors import UsageError
from store.events import now_us
from store.query import dialect, narrowing_terms
from store.search import SearchQuery
from store.vectors import CURSOR, VectorHit, VectorIndex, VectorState, read_state

NO_PGVECTOR = (
    "install pgvector on the PostgreSQL server (Debian, Ubuntu: apt install postgresql-NN-pgvector, NN its major"
    " version; or run the pgvector/pgvector image), then `toka daemon restart`; or set recall.semantic = false"
)

TABLE = "CREATE TABLE IF NOT EXISTS vectors (seq bigint PRIMARY KEY, vector vector NOT NULL)"

Run = Callable[..., Awaitable[Any]]


def literal(vector: bytes) -> str:
    """pgvector's text form of a packed vector."""
    import numpy as np

    return "[" + ",".join(repr(float(x)) for x in np.frombuffer(vector, dtype="<f4")) + "]"


async def prepare(conn: AsyncConnection) -> None:
    """The extension and the table, each made when missing; UsageError naming the install when the
    server lacks pgvector, and what to run when the role may not make them."""
    cursor = await conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector'),"
        " EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector'), to_regclass('vectors') IS NOT NULL"
    )
    row = await cursor.fetchone()
    assert row is not None
    installed, available, made = row
    if not installed and not available:
        raise UsageError("the PostgreSQL server has no pgvector extension, which semantic recall needs", NO_PGVECTOR)
    if installed and made:
        # Not even CREATE ... IF NOT EXISTS: it asks for the right to create in the schema (and a
        # superuser's, for an extension that is not trusted) before it looks whether there is
        # anything to create, which a role granted only the use of the tables has not.
        return
    user, database = conn.info.user, conn.info.dbname
    try:
        async with conn.transaction():
            if not installed:
                await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            await conn.execute(TABLE)
    except errors.InsufficientPrivilege:
        if not installed:
            raise UsageError(
                f"the role {user} may not create the pgvector extension in database {database},"
                " which semantic recall needs",
                f"a superuser runs `CREATE EXTENSION vector` in database {database} once, then"
                " `toka daemon restart`; or set recall.semantic = false",
            ) from None
        raise UsageError(
            f"the role {user} may not create the table of semantic recall's vectors in database {database}",
            f"the database's owner runs `{TABLE}` and `GRANT SELECT, INSERT, DELETE ON vectors TO {user}`,"
            " then `toka daemon restart`; or set recall.semantic = false",
        ) from None


async def vector_state(conn: AsyncConnection) -> VectorState:
    cursor = await conn.execute("SELECT count(*) FROM vectors")
    row = await cursor.fetchone()
    saved = await (await conn.execute(dialect(READ_CURSOR), (CURSOR,))).fetchone()
    return read_state(None if saved is None else str(saved[0]), int(row[0]) if row else 0)


async def add_vectors(conn: AsyncConnection, rows: list[tuple[int, bytes]], state: VectorState) -> None:
    """The batch and the cursor after it, in one transaction; a vector another daemon stored first
    is kept."""
    async with conn.transaction():
        async with conn.cursor() as cursor:
            await cursor.executemany(
                "INSERT INTO vectors (seq, vector) VALUES (%s, %s::vector) ON CONFLICT (seq) DO NOTHING",
                [(seq, literal(vector)) for seq, vector in rows],
            )
        await conn.execute(dialect(SAVE_CURSOR), (CURSOR, state.cursor_value(), now_us()))


async def clear_vectors(conn: AsyncConnection, model: str) -> None:
    async with conn.transaction():
        await conn.execute("DELETE FROM vectors")
        await conn.execute(dialect(SAVE_CURSOR), (CURSOR, VectorState(model, 0, 0).cursor_value(), now_us()))


async def nearest(conn: AsyncConnection, vector: bytes, query: SearchQuery) -> list[VectorHit]:
    filters, params = narrowing_terms(query)
    # The nearest seqs first, each distance computed once, over the vectors alone when nothing
    # narrows the search (every vector is of an event: the embedder stores them for events it
    # read, and the log is append-only here); the events' columns and text joined to those few.
    # Joining them to every row before the sort took 5.5 times as long at 100,000 vectors.
    candidates = (
        "SELECT v.seq, v.vector <=> ?::vector AS distance FROM vectors v"
        + (" JOIN events e ON e.seq = v.seq WHERE true" + filters if filters else "")
        + " ORDER BY distance, v.seq LIMIT ?"
    )
    sql = dialect(
        "SELECT e.seq, e.id, e.session, e.agent, e.kind, e.ts, e.digest, 1 - n.distance, t.text"
        f" FROM ({candidates}) n JOIN events e ON e.seq = n.seq LEFT JOIN search_text t ON t.seq = n.seq"
        " ORDER BY n.distance, n.seq"
    )
    rows = await (await conn.execute(sql, [literal(vector), *params, query.limit])).fetchall()
    return [
        VectorHit(seq, event_id, session, agent, kind, ts, digest, float(similarity), text or "")
        for seq, event_id, session, agent, kind, ts, digest, similarity, text in rows
    ]


class PostgresVectors(VectorIndex):
    """The index as the store runs it: writes on the writer's connection, the state on the
    reader's, nearest neighbours on the searcher's; the extension and table made on first use."""

    def __init__(self, write: Run, read: Run, search: Run, project: Callable[[], Awaitable[None]]) -> None:
        self._write, self._read, self._search = write, read, search
        # A hit's text is the search index's, which follows the log behind its commits: a search
        # has the store apply what is waiting first, as a search by words does.
        self._project = project
        self._ready = False

    @property
    def method(self) -> str:
        return "pgvector"

    async def _prepared(self) -> None:
        if not self._ready:
            await self._write(prepare)
            self._ready = True

    async def state(self) -> VectorState:
        await self._prepared()
        state: VectorState = await self._read(vector_state)
        return state

    async def add(self, rows: list[tuple[int, bytes]], state: VectorState) -> None:
        await self._prepared()
        await self._write(add_vectors, rows, state)

    async def clear(self, model: str) -> None:
        await self._prepared()
        await self._write(clear_vectors, model)

    async def nearest(self, vector: bytes, query: SearchQuery) -> list[VectorHit]:
        await self._project()
        await self._prepared()
        hits: list[VectorHit] = await self._search(nearest, vector, query)
        return hits
