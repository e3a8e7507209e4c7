"""The session tables are projections of the log: rebuilt from the events, they answer the same."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, closing
from pathlib import Path

import pytest

from store.base import EventQuery, EventStore, SessionInfo
from store.events import NewEvent
from store.sqlite import SqliteStore

OpenSqlite = Callable[..., AbstractAsyncContextManager[SqliteStore]]
T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z in microseconds


KINDS = ("message", "tool.call", "tool.result", "usage")
AGENTS = (None, "claude", "codex")


def imported(n: int) -> NewEvent:
    return NewEvent("import", "message", {"text": "same"}, "claude", T0 + n, key=f"rec-{n}")


async def mixed_workload(store: EventStore) -> None:
    """Batches and single appends, several agents and kinds, imported (older) times, repeated
    keys and ids, a cross-session parent, the same payload in many events."""
    for n in range(40):
        await store.append([NewEvent(f"run-{n % 4}", KINDS[n % 4], {"n": n}, AGENTS[n % 3])])
    await store.append([imported(n) for n in range(30)])
    # The same records again (nothing new), and one from before them all.
    await store.append(
        [imported(n) for n in range(30)]
        + [NewEvent("import", "note.decision", {"text": "earliest"}, "user", T0 - 1_000_000)]
    )
    head = (await store.query(EventQuery(session="run-2", order="desc", limit=1)))[0]
    handoff = NewEvent("run-9", "lifecycle", {"state": "ACTIVE"}, ts=T0, parents=(head.id,))
    [continued] = await store.append([handoff])
    [repeated] = await store.append([handoff])
    await store.append([NewEvent("run-9", "handoff", {"from": head.id}, "claude-2")])
    assert continued.created and not repeated.created


async def test_rebuild_gives_the_same_sessions_as_the_incremental_projection(
    store: EventStore,
) -> None:
    await mixed_workload(store)
    before = await store.sessions()
    singles = [await store.session(s.session) for s in before]

    assert await store.rebuild_projections() == 6

    assert await store.sessions() == before
    assert [await store.session(s.session) for s in before] == singles


async def test_projection_matches_what_the_log_says(store: EventStore) -> None:
    await mixed_workload(store)
    events = await store.query(EventQuery())

    for info in await store.sessions():
        own = [e for e in events if e.session == info.session]
        agents: dict[str, int] = {}
        kinds: dict[str, int] = {}
        for e in own:
            if e.agent is not None:
                agents[e.agent] = agents.get(e.agent, 0) + 1
            kinds[e.kind] = kinds.get(e.kind, 0) + 1
        assert info == SessionInfo(
            info.session,
            len(own),
            own[0].seq,
            own[-1].seq,
            min(e.ts for e in own),
            max(e.ts for e in own),
            own[-1].id,
            agents,
            kinds,
        )


async def test_appends_after_a_rebuild_extend_the_rebuilt_projection(store: EventStore) -> None:
    await mixed_workload(store)
    await store.rebuild_projections()
    [added] = await store.append([NewEvent("run-1", "usage", {"input": 5}, "codex")])

    run1 = await store.session("run-1")

    assert (run1.head, run1.last_seq) == (added.event.id, added.event.seq)
    previous = EventQuery(session="run-1", before_seq=added.event.seq, order="desc", limit=1)
    assert added.event.parents == ((await store.query(previous))[0].id,)
    assert (await store.verify()).ok


@pytest.mark.parametrize(
    "damage",
    [
        "DELETE FROM sessions; DELETE FROM session_agents; DELETE FROM session_kinds",
        "UPDATE sessions SET events = 0, head = 'x'; UPDATE session_kinds SET events = 7",
        "DELETE FROM session_agents WHERE agent = 'claude'; DELETE FROM sessions WHERE session = 'run-1'",
    ],
    ids=["emptied", "wrong", "partly deleted"],
)
async def test_rebuild_restores_projections_damaged_in_the_file(
    db_path: Path, open_sqlite: OpenSqlite, damage: str
) -> None:
    async with open_sqlite(db_path) as store:
        await mixed_workload(store)
        before = await store.sessions()
    with closing(sqlite3.connect(db_path)) as db:
        db.executescript(damage)

    async with open_sqlite(db_path) as store:
        assert await store.sessions() != before
        assert await store.rebuild_projections() == len(before)
        assert await store.sessions() == before
    async with open_sqlite(db_path) as store:
        assert await store.sessions() == before
        assert (await store.verify()).ok
