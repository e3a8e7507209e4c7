"""Closing a PostgreSQL store cancels the search it is running on the server: a daemon that stops
leaves no statement of its own running there (docs/search.md, "Long searches")."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg

from store.errors import TokaError
from store.events import NewEvent
from store.postgres.store import PostgresStore
from store.search import SearchQuery

SEARCHING = (
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
    " AND application_name LIKE 'toka %' AND state = 'active' AND query LIKE '%search_text%'"
)


async def count(admin: psycopg.AsyncConnection[Any]) -> int:
    found = await (await admin.execute(SEARCHING)).fetchone()
    assert found is not None
    return int(found[0])


async def until(admin: psycopg.AsyncConnection[Any], wanted: int) -> None:
    """Poll the server's view of its backends until ``wanted`` searches of toka's run there."""
    async with asyncio.timeout(30):
        while await count(admin) != wanted:
            await asyncio.sleep(0.01)


def test_closing_the_store_cancels_a_search_running_on_the_server(postgres_database: str) -> None:
    async def scenario() -> BaseException | None:
        store = await PostgresStore.open(postgres_database)
        await store.append([NewEvent(session="s", kind="message", payload={"text": "login timeout"})])
        await store.project()  # in the search text before the table is locked: only the search waits
        async with await psycopg.AsyncConnection.connect(postgres_database, autocommit=True) as admin:
            locker = await psycopg.AsyncConnection.connect(postgres_database)
            # The search waits for the table, held by another transaction: a search that runs on.
            await locker.execute("LOCK TABLE search_text IN ACCESS EXCLUSIVE MODE")
            search = asyncio.create_task(store.search(SearchQuery("login")))
            await until(admin, 1)
            await store.close()
            await until(admin, 0)  # cancelled, while the lock is still held
            await locker.rollback()
            await locker.close()
        outcome = await asyncio.gather(search, return_exceptions=True)
        return outcome[0] if isinstance(outcome[0], BaseException) else None

    failure = asyncio.run(scenario())
    assert isinstance(failure, TokaError), failure  # the search's caller learns it did not finish
