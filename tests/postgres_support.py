"""Helpers for the tests that put a toka log in PostgreSQL: roles with chosen rights, URLs that log
in as them (or carry a password), and reading a database the way the tests check it."""

from __future__ import annotations

import asyncio
import secrets
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql

from store.events import NewEvent
from store.postgres.store import PostgresStore

# The run's server trusts every local connection, so any password logs in: a URL can carry one
# for the tests to look for in everything toka prints.
PASSWORD = "pw-" + secrets.token_hex(8)

# What a daemon's role needs (store/postgres/health.py TABLE_RIGHTS), as grants for postgres_support.role.
ALL_RIGHTS = (
    "GRANT USAGE ON SCHEMA public TO {role}",
    "GRANT SELECT, INSERT ON events, blobs, search_text TO {role}",
    "GRANT SELECT, INSERT, UPDATE ON sessions, session_agents, session_kinds, usage_buckets, cursors TO {role}",
    "GRANT SELECT, INSERT, UPDATE ON log_end TO {role}",
    "GRANT SELECT, UPDATE ON projected TO {role}",
    "GRANT SELECT, INSERT ON usage_requests TO {role}",
    "GRANT SELECT, INSERT, DELETE ON append_batches TO {role}",
    "GRANT SELECT ON toka_migrations TO {role}",
)


def as_user(url: str, user: str, password: str | None = PASSWORD) -> str:
    """``url`` (a postgresql:// URL) logging in as ``user``, with ``password`` in it."""
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    login = user if password is None else f"{user}:{urllib.parse.quote(password, safe='')}"
    return parts._replace(netloc=f"{login}@{host}").geturl()


def database_of(url: str) -> str:
    """The name of the database a postgresql:// URL connects to."""
    return urllib.parse.unquote(urllib.parse.urlsplit(url).path.lstrip("/"))


def rows(url: str, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(query, params).fetchall()


def execute(url: str, *statements: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)


def set_up_schema(url: str) -> None:
    """toka's tables in the database at ``url``, as a daemon's first start makes them."""

    async def open_and_close() -> None:
        store = await PostgresStore.open(url)
        await store.close()

    asyncio.run(open_and_close())


def append(url: str, *events: NewEvent) -> None:
    """``events`` appended to the database at ``url`` by the store itself, as another daemon would."""

    async def run() -> None:
        store = await PostgresStore.open(url)
        try:
            await store.append(events)
        finally:
            await store.close()

    asyncio.run(run())


def verify(url: str) -> dict[str, Any]:
    """The database verified by the store itself, apart from any daemon: {ok, events, problems}."""

    async def run() -> dict[str, Any]:
        store = await PostgresStore.open(url)
        try:
            report = await store.verify()
        finally:
            await store.close()
        return {"ok": report.ok, "events": report.events, "problems": [p.detail for p in report.problems]}

    return asyncio.run(run())


@contextmanager
def role(database_url: str, *grants: str) -> Iterator[str]:
    """A new login role, given ``grants`` (statements with ``{role}`` for its name) in the database
    of ``database_url``; its name. Dropped afterwards, with whatever it was granted."""
    name = "toka_r_" + secrets.token_hex(6)
    execute(database_url, f"CREATE ROLE {name} LOGIN", *(grant.format(role=name) for grant in grants))
    try:
        yield name
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(name)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))
