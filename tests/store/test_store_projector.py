"""The SQLite backend's derived tables kept behind the log: an append commits the log alone, a read
of those tables applies what was committed first, and what a killed process left unapplied, or
half-applied, is applied once when the store opens."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, closing
from pathlib import Path

from store.events import NewEvent
from store.merkle import SignedRoot
from store.search import SearchQuery
from store.sqlite.store import UNPROJECTED_MAX, SqliteStore

OpenSqlite = Callable[..., AbstractAsyncContextManager[SqliteStore]]
T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z in microseconds
USAGE = {"model": "claude-opus-4-6", "input_tokens": 10, "output_tokens": 70}


def _batch(n: int) -> list[NewEvent]:
    """A message with a word of its own and a usage event, in session s{n % 2}."""
    session = f"s{n % 2}"
    return [
        NewEvent(session, "message", {"role": "user", "text": f"word{n} shared"}, "main", T0 + n),
        NewEvent(session, "usage", USAGE, "main", T0 + n),
    ]


def _raw(db_path: Path, sql: str) -> object:
    with closing(sqlite3.connect(db_path)) as db:
        return db.execute(sql).fetchone()[0]


async def test_an_append_commits_the_log_alone_and_a_read_of_the_tables_applies_it_first(
    sqlite_store: SqliteStore, db_path: Path
) -> None:
    await sqlite_store.append(_batch(1))

    assert sqlite_store.unprojected() == 2
    assert _raw(db_path, "SELECT count(*) FROM events") == 2
    assert _raw(db_path, "SELECT seq FROM projected") == 0
    assert _raw(db_path, "SELECT count(*) FROM search_text") == 0
    assert _raw(db_path, "SELECT count(*) FROM sessions") == 0
    assert _raw(db_path, "SELECT count(*) FROM usage_buckets") == 0

    [hit] = await sqlite_store.search(SearchQuery("word1"))
    assert (hit.seq, hit.session) == (1, "s1")
    assert sqlite_store.unprojected() == 0
    assert _raw(db_path, "SELECT seq FROM projected") == 2
    assert _raw(db_path, "SELECT events FROM sessions WHERE session = 's1'") == 2
    assert [row.calls for row in await sqlite_store.usage_rows()] == [1]
    frontier = await sqlite_store.tree()
    assert frontier is not None and frontier.size == 2


async def test_reads_that_come_while_a_batch_is_applied_wait_for_it(sqlite_store: SqliteStore) -> None:
    for n in range(10):
        await sqlite_store.append(_batch(n))

    # The first takes every waiting event; the others find none left and must wait for it.
    _, sessions, hits, usage = await asyncio.gather(
        sqlite_store.project(),
        sqlite_store.sessions(),
        sqlite_store.search(SearchQuery("shared", limit=100)),
        sqlite_store.usage_rows(),
    )

    assert {s.session: s.events for s in sessions} == {"s0": 10, "s1": 10}
    assert len(hits) == 10
    assert sum(row.calls for row in usage) == 10


async def test_appends_nothing_applies_are_applied_by_the_append_that_holds_too_many(
    sqlite_store: SqliteStore, db_path: Path
) -> None:
    batch = 1000
    held = []
    for start in range(0, UNPROJECTED_MAX + 2 * batch, batch):
        await sqlite_store.append(
            [NewEvent("bulk", "message", {"text": f"n{n}"}, "main", T0 + n) for n in range(start, start + batch)]
        )
        held.append(sqlite_store.unprojected())

    assert max(held) < UNPROJECTED_MAX  # applied by the append that reached it
    assert held[-1] == 2 * batch
    assert _raw(db_path, "SELECT seq FROM projected") == UNPROJECTED_MAX


KILLED_BEFORE_APPLYING = """
import asyncio, os, sys
sys.path.insert(0, sys.argv[2])
from test_store_projector import _batch
from store.sqlite.store import UNPROJECTED_MAX, SqliteStore

async def main():
    store = await SqliteStore.open(sys.argv[1])
    for n in range(20):
        await store.append(_batch(n))
    os._exit(9)  # SIGKILL: acknowledged, never applied

asyncio.run(main())
"""

KILLED_WHILE_APPLYING = """
import asyncio, os, sys
sys.path.insert(0, sys.argv[2])
from test_store_projector import _batch
from store.sqlite import projector
from store.sqlite.store import UNPROJECTED_MAX, SqliteStore

folded = projector.project_batch

def killed(db, events):
    folded(db, events)  # the search index and the session tables written, the usage too
    os._exit(9)  # SIGKILL before the tracking record moves and the transaction commits

async def main():
    store = await SqliteStore.open(sys.argv[1])
    for n in range(10):
        await store.append(_batch(n))
    await store.project()  # the first ten batches applied
    for n in range(10, 20):
        await store.append(_batch(n))
    projector.project_batch = killed
    await store.project()

asyncio.run(main())
"""


async def _whole(db_path: Path, open_sqlite: OpenSqlite) -> None:
    """The derived tables hold each of the 20 batches once, as a refill from the log would."""
    store = await SqliteStore.open(db_path)
    try:
        assert store.unprojected() == 0
        assert _raw(db_path, "SELECT seq FROM projected") == 40  # applied when it opened, before any read
        sessions = {s.session: (s.events, s.last_seq) for s in await store.sessions()}
        assert sessions == {"s0": (20, 38), "s1": (20, 40)}  # batch n holds seqs 2n+1 and 2n+2
        assert len(await store.search(SearchQuery("shared", limit=100))) == 20
        for n in (0, 10, 19):
            [hit] = await store.search(SearchQuery(f"word{n}"))
            assert hit.seq == 2 * n + 1
        usage = await store.usage_rows()
        assert (sum(r.calls for r in usage), sum(r.output_tokens for r in usage)) == (20, 20 * 70)
        frontier = await store.tree()
        assert frontier is not None and frontier.size == 40
        # The same tree as a process that was never killed grows over the same appends.
        async with open_sqlite(db_path.with_name("uninterrupted.db")) as uninterrupted:
            for n in range(20):
                await uninterrupted.append(_batch(n))
            assert await uninterrupted.tree() == frontier
        report = await store.check_tree([SignedRoot(frontier.size, frontier.root(), "a head of the uninterrupted log")])
        assert report is not None and (report.matched, report.covered, report.problems) == (1, 40, [])
        assert (await store.verify()).ok
        before = await store.sessions()
        await store.rebuild_projections()
        assert await store.sessions() == before
        assert await store.usage_rows() == usage
    finally:
        await store.close()


async def test_appends_a_killed_process_never_applied_are_applied_when_the_store_opens(
    db_path: Path, open_sqlite: OpenSqlite
) -> None:
    here = str(Path(__file__).parent)
    killed = subprocess.run([sys.executable, "-c", KILLED_BEFORE_APPLYING, str(db_path), here], check=False)

    assert killed.returncode == 9
    assert _raw(db_path, "SELECT count(*) FROM events") == 40
    assert _raw(db_path, "SELECT seq FROM projected") == 0
    await _whole(db_path, open_sqlite)


async def test_a_batch_half_applied_when_its_process_was_killed_is_applied_once_when_the_store_opens(
    db_path: Path, open_sqlite: OpenSqlite
) -> None:
    here = str(Path(__file__).parent)
    killed = subprocess.run([sys.executable, "-c", KILLED_WHILE_APPLYING, str(db_path), here], check=False)

    assert killed.returncode == 9
    assert _raw(db_path, "SELECT count(*) FROM events") == 40
    assert _raw(db_path, "SELECT seq FROM projected") == 20  # the half-applied batch rolled back whole
    await _whole(db_path, open_sqlite)
