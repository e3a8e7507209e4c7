"""The PostgreSQL backend's derived tables kept behind the log: an append writes the log alone, a
read of those tables brings them to the log's end (another daemon's appends included), and what a
killed daemon left unapplied is applied by the next store that opens."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg

from store.events import NewEvent
from store.postgres.store import PostgresStore
from store.search import SearchQuery

USAGE = {"model": "claude-opus-4-6", "input_tokens": 10, "output_tokens": 70}
DERIVED = (
    "SELECT (SELECT seq FROM projected), (SELECT count(*) FROM search_text),"
    " (SELECT coalesce(sum(events), 0) FROM sessions), (SELECT coalesce(sum(calls), 0) FROM usage_buckets)"
)


def _batch(n: int) -> list[NewEvent]:
    return [
        NewEvent(f"s{n % 2}", "message", {"role": "user", "text": f"word{n} shared"}, "main"),
        NewEvent(f"s{n % 2}", "usage", USAGE, "main"),
    ]


async def _derived(url: str) -> tuple[Any, ...]:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        row = await (await conn.execute(DERIVED)).fetchone()
    assert row is not None
    return tuple(int(value) for value in row)


async def test_an_append_writes_the_log_alone_and_a_read_brings_the_tables_to_its_end(postgres_database: str) -> None:
    store = await PostgresStore.open(postgres_database)
    other = await PostgresStore.open(postgres_database)  # a second daemon on the same log
    try:
        await store.append(_batch(1))
        assert store.unprojected() == 2
        assert await _derived(postgres_database) == (0, 0, 0, 0)

        await other.append(_batch(2))
        # A read on the first daemon sees its own append and the other daemon's.
        hits = await store.search(SearchQuery("shared"))
        assert sorted(hit.seq for hit in hits) == [1, 3]
        assert store.unprojected() == 0
        assert await _derived(postgres_database) == (4, 2, 4, 2)
        assert other.unprojected() == 2
        # The other daemon's read finds nothing left to apply: each event is applied once.
        assert {s.session: s.events for s in await other.sessions()} == {"s0": 2, "s1": 2}
        assert other.unprojected() == 0
        assert await _derived(postgres_database) == (4, 2, 4, 2)
    finally:
        await other.close()
        await store.close()


KILLED_BEFORE_APPLYING = """
import asyncio, os, sys
sys.path.insert(0, sys.argv[2])
from test_store_postgres_projector import _batch
from store.postgres.store import PostgresStore

async def main():
    store = await PostgresStore.open(sys.argv[1])
    for n in range(20):
        await store.append(_batch(n))
    os._exit(9)  # SIGKILL: acknowledged, never applied

asyncio.run(main())
"""


async def test_appends_a_killed_daemon_never_applied_are_applied_by_the_next_open(postgres_database: str) -> None:
    here = str(Path(__file__).parent)
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_BEFORE_APPLYING, postgres_database, here], check=False, timeout=60
    )
    assert killed.returncode == 9
    assert await _derived(postgres_database) == (0, 0, 0, 0)

    store = await PostgresStore.open(postgres_database)
    try:
        assert await _derived(postgres_database) == (40, 20, 40, 20)  # applied as it opened
        [hit] = await store.search(SearchQuery("word19"))
        assert hit.seq == 39
        before = await store.sessions()
        await store.rebuild_projections()
        assert await store.sessions() == before
        assert (await store.verify()).ok
    finally:
        await store.close()
