"""A session's last active time is the agent's own activity: what toka appends to an old session
(a handoff, a note, a compression, a lifecycle change) neither moves it nor re-sorts the list."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import psycopg
import pytest
from older_toka import as_older_toka

from store.base import EventStore
from store.events import NewEvent
from store.postgres.store import PostgresStore
from store.sqlite.store import SqliteStore

OpenSqlite = Callable[..., AbstractAsyncContextManager[SqliteStore]]

FEB = 1_770_000_000_000_000  # 2026-02-02, when the agent last worked
MAR = FEB + 30 * 86_400_000_000  # a later session, still older than now


async def _import_two(store: EventStore) -> None:
    await store.append(
        [
            NewEvent("old", "message", {"text": "hi"}, "claude", FEB),
            NewEvent("old", "tool.call", {"tool": "Edit"}, "claude", FEB + 1),
            NewEvent("newer", "message", {"text": "hi"}, "claude", MAR),
        ]
    )


@pytest.mark.parametrize(
    "kind",
    ["handoff", "note.decision", "compression", "lifecycle", "alert", "checkpoint", "memory.set"],
)
async def test_a_toka_event_appended_now_keeps_the_old_last_active_time(store: EventStore, kind: str) -> None:
    await _import_two(store)

    await store.append([NewEvent("old", kind, {"text": "appended today"}, "user")])

    old = await store.session("old")
    assert old.last_ts == FEB + 1
    assert old.events == 3
    assert [s.session for s in await store.sessions()] == ["newer", "old"]
    assert await store.rebuild_projections() == 2
    assert (await store.session("old")).last_ts == FEB + 1
    assert [s.session for s in await store.sessions()] == ["newer", "old"]


async def test_the_agents_activity_moves_the_last_active_time(store: EventStore) -> None:
    await _import_two(store)
    await store.append([NewEvent("old", "note.todo", {"text": "later"}, "user")])

    await store.append([NewEvent("old", "message", {"text": "back"}, "claude", MAR + 5)])

    assert (await store.session("old")).last_ts == MAR + 5
    assert [s.session for s in await store.sessions()] == ["old", "newer"]


async def test_a_session_of_toka_events_only_keeps_its_first_events_time(store: EventStore) -> None:
    await store.append([NewEvent("notes", "note.decision", {"text": "a"}, "user", FEB)])
    await store.append([NewEvent("notes", "handoff", {"text": "b"}, "user", MAR)])

    assert (await store.session("notes")).last_ts == FEB
    await store.rebuild_projections()
    assert (await store.session("notes")).last_ts == FEB


async def test_a_sqlite_upgrade_recomputes_the_last_active_time_of_an_existing_log(
    db_path: Path, open_sqlite: OpenSqlite, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as old_toka:  # a toka before m012: any event moved last_ts
        as_older_toka(old_toka, 11)
        old_toka.setattr("store.projection.is_activity", lambda kind: True)
        async with open_sqlite(db_path) as store:
            await _import_two(store)
            await store.append([NewEvent("old", "handoff", {"text": "appended today"}, "user")])
            assert (await store.session("old")).last_ts > MAR

    async with open_sqlite(db_path) as store:
        assert (await store.session("old")).last_ts == FEB + 1
        assert [s.session for s in await store.sessions()] == ["newer", "old"]


async def test_a_postgres_upgrade_recomputes_the_last_active_time_of_an_existing_log(postgres_database: str) -> None:
    store = await PostgresStore.open(postgres_database)
    await _import_two(store)
    await store.append([NewEvent("old", "handoff", {"text": "appended today"}, "user")])
    await store.close()
    async with await psycopg.AsyncConnection.connect(postgres_database) as conn:  # as a toka before p010 left it
        await conn.execute(
            "UPDATE sessions SET last_ts = (SELECT max(ts) FROM events e WHERE e.session = sessions.session)"
        )
        await conn.execute("DELETE FROM toka_migrations WHERE name = 'p010_last_active'")

    upgraded = await PostgresStore.open(postgres_database)
    try:
        assert (await upgraded.session("old")).last_ts == FEB + 1
        assert [s.session for s in await upgraded.sessions()] == ["newer", "old"]
    finally:
        await upgraded.close()
