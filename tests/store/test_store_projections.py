"""The session tables are projections of the log: rebuilt from the events, they answer the same."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, closing
from pathlib import Path

import pytest
from older_toka import as_older_toka

from store.base import EventQuery, EventStore, SessionInfo
from store.events import NewEvent
from store.kinds import is_activity
from store.sqlite import connect
from store.sqlite import schema as migrations
from store.sqlite import usage as sqlite_usage
from store.sqlite.store import SqliteStore

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
            # the last active time: of its latest event of the agent's own activity, else its first
            max((e.ts for e in own if is_activity(e.kind)), default=min(e.ts for e in own)),
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
        "UPDATE session_kinds SET events = 7",
        "DELETE FROM session_agents WHERE agent = 'claude'; DELETE FROM sessions WHERE session = 'run-1'",
    ],
    ids=["wrong counts", "partly deleted"],
)
async def test_rebuild_restores_projections_damaged_in_the_file(
    db_path: Path, open_sqlite: OpenSqlite, damage: str
) -> None:
    # Damage away from the log's last event, which opening the store does not look for.
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


# What a kill between an upgrade's last step and the rebuild that followed it left: the session
# tables (m002) or the usage table (m006) empty over a log full of events; and a head left behind.
STALE_PROJECTIONS = {
    "sessions emptied": "DELETE FROM sessions; DELETE FROM session_agents; DELETE FROM session_kinds",
    "usage emptied": "DELETE FROM usage_buckets",
    "head left behind": "UPDATE sessions SET events = events - 1, head = 'x' WHERE session = 'run-9'",
}


@pytest.mark.parametrize("damage", list(STALE_PROJECTIONS.values()), ids=list(STALE_PROJECTIONS))
async def test_projections_that_disagree_with_the_log_are_rebuilt_when_it_opens(
    db_path: Path, open_sqlite: OpenSqlite, damage: str
) -> None:
    async with open_sqlite(db_path) as store:
        await mixed_workload(store)
        before, usage = await store.sessions(), await store.usage_rows()
        last = (await store.query(EventQuery(session="run-9", order="desc", limit=1)))[0]
    assert usage, "the workload records usage"
    with closing(sqlite3.connect(db_path)) as db:
        db.executescript(damage)

    async with open_sqlite(db_path) as store:
        assert await store.sessions() == before
        assert await store.usage_rows() == usage
        [added] = await store.append([NewEvent("run-9", "message", {"text": "goes on"})])
        assert (await store.verify()).ok
    assert added.event.parents == (last.id,)  # one chain, not a second one from nothing


async def test_an_append_chains_onto_the_logs_last_event_whatever_the_session_table_says(
    db_path: Path, open_sqlite: OpenSqlite
) -> None:
    async with open_sqlite(db_path) as store:
        await mixed_workload(store)
        events = await store.query(EventQuery(session="run-1"))
        # The table is wrong while the store is open, which no check at open time can see.
        with closing(sqlite3.connect(db_path)) as db, db:
            db.execute("DELETE FROM sessions WHERE session = 'run-1'")
        [added] = await store.append([NewEvent("run-1", "message", {"text": "next"})])
    assert added.event.parents == (events[-1].id,)


async def test_verify_names_a_session_the_session_table_does_not_know(db_path: Path, open_sqlite: OpenSqlite) -> None:
    async with open_sqlite(db_path) as store:
        await mixed_workload(store)
        events = await store.query(EventQuery(session="run-1"))
    with closing(sqlite3.connect(db_path)) as db, db:
        db.execute("DELETE FROM sessions WHERE session = 'run-1'")  # not the session of the last event

    async with open_sqlite(db_path) as store:
        report = await store.verify()
        one = await store.verify("run-1")
    [problem] = report.problems
    assert (problem.session, problem.what, problem.id) == ("run-1", "head", events[-1].id)
    assert "no row" in problem.detail
    assert one.problems == report.problems


UPGRADE_KILLED_IN_ITS_REBUILD = """
import asyncio, os, sys
from store.sqlite import projections
from store.sqlite.store import SqliteStore

def killed(db, session=None):
    os._exit(9)  # SIGKILL in the middle of refilling the projection

projections.project_usage = killed
asyncio.run(SqliteStore.open(sys.argv[1]))
"""


async def test_an_upgrade_killed_while_it_refills_a_projection_commits_nothing_of_its_last_step(
    db_path: Path, open_sqlite: OpenSqlite, monkeypatch: pytest.MonkeyPatch
) -> None:
    usage = {"model": "claude-opus-4-6", "input_tokens": 10, "output_tokens": 70}
    with monkeypatch.context() as old_toka:  # a toka of the first five steps, which kept no usage projection
        as_older_toka(old_toka, 5)
        old_toka.setattr(sqlite_usage, "counted", lambda db, usage: [])
        old_toka.setattr(connect, "check_projections", lambda db: None)  # nor checked it at open
        async with open_sqlite(db_path) as store:
            await store.append([NewEvent("s1", "usage", usage, "main", T0)] * 2)

    killed = subprocess.run([sys.executable, "-c", UPGRADE_KILLED_IN_ITS_REBUILD, str(db_path)], check=False)

    assert killed.returncode == 9
    with closing(sqlite3.connect(db_path)) as db:
        steps = [row[0] for row in db.execute("SELECT name FROM toka_migrations ORDER BY seq")]
    # The steps before the last committed on their own; the last one went with its rebuild.
    assert steps == [m.__name__ for m in migrations.MIGRATIONS[:-1]]
    async with open_sqlite(db_path) as store:
        [row] = await store.usage_rows()
    assert row.calls == 2
