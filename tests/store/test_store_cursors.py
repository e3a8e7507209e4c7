"""Cursors: a reader's position saved beside the log, on every backend, replaced in place and
read back after the store is opened again."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from store.base import EventStore

if TYPE_CHECKING:
    from tests.store.conftest import Backend


async def test_a_cursor_is_none_until_saved_then_the_latest_value(store: EventStore) -> None:
    assert await store.cursor("export.otlp http://a/v1/traces") is None

    await store.save_cursor("export.otlp http://a/v1/traces", '{"seq":1}')
    await store.save_cursor("export.otlp http://a/v1/traces", '{"seq":2}')
    await store.save_cursor("export.otlp http://b/v1/traces", '{"seq":9}')

    assert await store.cursor("export.otlp http://a/v1/traces") == '{"seq":2}'
    assert await store.cursor("export.otlp http://b/v1/traces") == '{"seq":9}'


async def test_a_saved_cursor_outlives_the_store(backend: Backend) -> None:
    if backend.name == "memory":
        pytest.skip("nothing of a memory store outlives it")
    store = await backend.open()
    await store.save_cursor("reader", "here")
    await store.close()
    backend.opened.remove(store)

    if backend.name == "sqlite":
        from store.sqlite.store import SqliteStore

        reopened: EventStore = await SqliteStore.open(backend.directory / "toka-0.db")
    else:
        from store.postgres.store import PostgresStore

        reopened = await PostgresStore.open(postgres_url_of(backend))
    backend.opened.append(reopened)
    assert await reopened.cursor("reader") == "here"


def postgres_url_of(backend: Backend) -> str:
    import postgres_server

    assert backend.admin_url is not None
    return postgres_server.with_dbname(backend.admin_url, backend.databases[-1])
