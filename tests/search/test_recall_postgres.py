"""Semantic recall on PostgreSQL for a role that is not a superuser (docs/recall.md, "Where the
vectors are"): told what a superuser or the database's owner runs when it may not make pgvector's
extension or the table of vectors, and storing and searching once they have; doctor's view of that
table. On the run's server, when it has pgvector."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import postgres_server
import postgres_support
import pytest
from postgres_support import as_user, database_of, execute
from test_recall_store import seeded, unit

from store.errors import UsageError
from store.postgres.health import MissingRights, inspect_postgres
from store.postgres.store import PostgresStore
from store.postgres.vectors import TABLE
from store.search import SearchQuery
from store.vectors import VectorState


@pytest.fixture
def database(postgres_database: str) -> str:
    """The test's database, on a server with pgvector; its URL logs in as a superuser, its owner."""
    if not postgres_server.offers_pgvector(postgres_database):
        pytest.skip("the run's PostgreSQL server has no pgvector")
    return postgres_database


@contextmanager
def user_role(database: str) -> Iterator[str]:
    """A login role that may read and write the tables there are in ``database`` but create
    nothing, as an administrator would set one up for a daemon; dropped afterwards."""
    with postgres_support.role(
        database,
        "GRANT USAGE ON SCHEMA public TO {role}",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}",
    ) as name:
        yield name


@asynccontextmanager
async def store_as_a_role(database: str, *first: str) -> AsyncIterator[tuple[str, PostgresStore]]:
    """toka's tables, made by the owner; then a :func:`user_role`, the statements ``first`` run by
    the owner (``{role}``: the role's name), and a store open as that role. All closed after."""
    owner = await PostgresStore.open(database)
    try:
        with user_role(database) as role:
            execute(database, *(statement.format(role=role) for statement in first))
            store = await PostgresStore.open(as_user(database, role))
            try:
                yield role, store
            finally:
                await store.close()
    finally:
        await owner.close()


async def test_a_role_that_may_not_create_the_extension_or_the_table_is_told_what_to_run(database: str) -> None:
    name = database_of(database)
    async with store_as_a_role(database) as (role, store):
        with pytest.raises(UsageError) as raised:
            await store.vectors().state()
        assert raised.value.message == (
            f"the role {role} may not create the pgvector extension in database {name}, which semantic recall needs"
        )
        assert raised.value.hint == (
            f"a superuser runs `CREATE EXTENSION vector` in database {name} once, then `toka daemon"
            " restart`; or set recall.semantic = false"
        )
        execute(database, "CREATE EXTENSION vector")
        with pytest.raises(UsageError) as raised:
            await store.vectors().state()
        assert raised.value.message == (
            f"the role {role} may not create the table of semantic recall's vectors in database {name}"
        )
        assert raised.value.hint == (
            f"the database's owner runs `{TABLE}` and `GRANT SELECT, INSERT, DELETE ON vectors TO {role}`,"
            " then `toka daemon restart`; or set recall.semantic = false"
        )


async def test_a_role_given_the_extension_and_the_table_stores_and_searches_vectors(database: str) -> None:
    # What the two hints above say to run, and nothing more.
    grants = ("CREATE EXTENSION vector", TABLE, "GRANT SELECT, INSERT, DELETE ON vectors TO {role}")
    async with store_as_a_role(database, *grants) as (_, store):
        index = await seeded(store)
        assert await index.state() == VectorState("test-model", 4, 3)
        hits = await index.nearest(unit(1, 0.2, 0), SearchQuery("", limit=3))
        assert [hit.seq for hit in hits] == [1, 2, 3]
        await index.clear("another-model")
        assert await index.state() == VectorState("another-model", 0, 0)


async def test_doctor_counts_the_vectors_as_tokas_and_names_the_rights_on_them_a_role_lacks(database: str) -> None:
    owner = await PostgresStore.open(database)
    try:
        with user_role(database) as role:
            execute(database, "CREATE EXTENSION vector", TABLE)  # after the role's grants: none on it
            as_role = as_user(database, role)
            assert inspect_postgres(database).other_tables == ()
            grant = f"GRANT SELECT, INSERT, DELETE ON vectors TO {role}"
            assert inspect_postgres(as_role).missing == (
                MissingRights("table", "vectors", ("SELECT", "INSERT", "DELETE"), grant),
            )
            execute(database, grant)
            assert inspect_postgres(as_role).missing == ()
    finally:
        await owner.close()
