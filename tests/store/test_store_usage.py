"""The usage projection: calls and tokens per quarter of an hour, session, agent, model and prompt
class, kept by each append (SQLite) or folded from the events (memory), the same either way, and
rebuilt from the log."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from store.base import EventStore
from store.ephemeral import EphemeralStore
from store.events import NewEvent
from store.sqlite.store import SqliteStore
from store.usage import BUCKET_US, PROMPT_CLASSES, UsageRow

T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z in microseconds
MINUTE = 60_000_000


def usage(ts: int, output: int = 10, model: str = "claude-opus-4-6", agent: str = "main", **counts: int) -> NewEvent:
    payload = {"model": model, "input_tokens": 5, "cache_read_tokens": 1000, "output_tokens": output, **counts}
    return NewEvent("s", "usage", payload, agent, ts)


async def test_usage_is_summed_per_bucket_agent_model_and_prompt_class(store: EventStore) -> None:
    await store.append(
        [
            usage(T0 + MINUTE),
            usage(T0 + 14 * MINUTE),
            usage(T0 + 15 * MINUTE),  # the next quarter of an hour
            usage(T0 + 2 * MINUTE, agent="explorer"),
            usage(T0 + 3 * MINUTE, model="claude-haiku-4-5"),
            usage(T0 + 4 * MINUTE, cache_read_tokens=250_000),  # a long prompt: a class of its own
            NewEvent("s", "message", {"text": "not usage"}, "main", T0),
        ]
    )
    rows = sorted(await store.usage_rows(), key=lambda r: r.key)
    long_class = PROMPT_CLASSES.index(200_000) + 1
    assert [(r.bucket, r.agent, r.model, r.prompt_class, r.calls) for r in rows] == [
        (T0, "explorer", "claude-opus-4-6", 0, 1),
        (T0, "main", "claude-haiku-4-5", 0, 1),
        (T0, "main", "claude-opus-4-6", 0, 2),
        (T0, "main", "claude-opus-4-6", long_class, 1),
        (T0 + BUCKET_US, "main", "claude-opus-4-6", 0, 1),
    ]
    both = rows[2]
    assert (both.input_tokens, both.cache_read_tokens, both.output_tokens) == (10, 2000, 20)
    assert (both.first_ts, both.last_ts) == (T0 + MINUTE, T0 + 14 * MINUTE)


async def test_rows_are_chosen_by_the_start_of_their_bucket(store: EventStore) -> None:
    await store.append([usage(T0 + n * BUCKET_US + MINUTE) for n in range(4)])
    chosen = await store.usage_rows(since=T0 + BUCKET_US, until=T0 + 3 * BUCKET_US)
    assert sorted(r.bucket for r in chosen) == [T0 + BUCKET_US, T0 + 2 * BUCKET_US]


async def test_rows_of_one_session(store: EventStore) -> None:
    other = NewEvent("t", "usage", {"model": "m", "input_tokens": 1}, "main", T0)
    await store.append([usage(T0), other, usage(T0 + BUCKET_US)])
    assert sorted((r.session, r.bucket) for r in await store.usage_rows(session="t")) == [("t", T0)]
    assert len(await store.usage_rows(since=T0 + BUCKET_US, session="s")) == 1


async def test_a_revision_adds_output_and_no_call(store: EventStore) -> None:
    revision = {"model": "claude-opus-4-6", "output_tokens": 40, "context_tokens": 1005, "revision": True}
    await store.append([usage(T0), NewEvent("s", "usage", revision, "main", T0 + MINUTE)])
    [row] = await store.usage_rows()
    assert (row.calls, row.output_tokens, row.input_tokens) == (1, 50, 5)


async def test_usage_without_model_or_agent_is_kept_under_empty_names(store: EventStore) -> None:
    await store.append([NewEvent("s", "usage", {"input_tokens": 7, "output_tokens": 1}, None, T0)])
    [row] = await store.usage_rows()
    assert (row.agent, row.model, row.calls, row.input_tokens) == ("", "", 1, 7)


@pytest.fixture
def sql_store(store: EventStore) -> EventStore:
    """An empty store of each backend that keeps the usage projection in a table."""
    if isinstance(store, EphemeralStore):
        pytest.skip("the memory backend folds the usage events when asked: it has no table to compare")
    return store


async def test_the_sql_projection_is_the_fold_of_the_events(sql_store: EventStore) -> None:
    """Many appends of random usage, in batches: the table kept by the appends (SQLite's and
    PostgreSQL's) equals the events folded afresh (the memory backend's way), and a rebuild gives
    it again."""
    rng = random.Random(7)
    for _ in range(30):
        batch = [
            usage(
                T0 + rng.randrange(6 * 60) * MINUTE,
                output=rng.randrange(500),
                model=rng.choice(("claude-opus-4-6", "gpt-5.3-codex", "")),
                agent=rng.choice(("main", "a1")),
                cache_creation_tokens=rng.randrange(3000),
                cache_read_tokens=rng.choice((0, 150_000, 300_000)),
            )
            for _ in range(rng.randrange(1, 20))
        ]
        await sql_store.append(batch)
    kept = sorted(await sql_store.usage_rows(), key=lambda r: r.key)
    folded = sorted(await EventStore.usage_rows(sql_store), key=lambda r: r.key)
    assert kept == folded
    await sql_store.rebuild_projections()
    assert sorted(await sql_store.usage_rows(), key=lambda r: r.key) == folded


async def test_pruned_usage_leaves_the_projection(sqlite_store: SqliteStore, tmp_path: Path) -> None:
    await sqlite_store.append([usage(T0), usage(T0 + 2 * BUCKET_US)])
    await sqlite_store.prune("s", before=T0 + BUCKET_US)
    rows: list[UsageRow] = await sqlite_store.usage_rows()
    assert [(r.bucket, r.calls) for r in rows] == [(T0 + 2 * BUCKET_US, 1)]


async def test_sums_in_sql_are_the_sums_in_python(sql_store: EventStore) -> None:
    """usage_sums per day of a zone, per bucket, per session and agent, of some models: the SQL
    backends' GROUP BY gives what the fold of the rows in Python gives."""
    rng = random.Random(11)
    for _ in range(20):
        await sql_store.append(
            [
                NewEvent(
                    rng.choice(("s", "t")),
                    "usage",
                    {"model": rng.choice(("m1", "m2")), "input_tokens": rng.randrange(900), "output_tokens": 3},
                    rng.choice(("main", "a1")),
                    T0 + rng.randrange(3 * 24 * 60) * MINUTE,
                )
                for _ in range(rng.randrange(1, 30))
            ]
        )
    day = 86_400_000_000
    for arguments in (
        {"width": day, "offset": -5 * 3_600_000_000},
        {"width": day, "offset": 2 * 3_600_000_000, "sessions": True},
        {"width": BUCKET_US},
        {"width": day, "session": "t", "models": ["m2"]},
        {"width": day, "sessions": True},
    ):
        window = {"since": T0 + BUCKET_US, "until": T0 + 2 * day}
        in_sql = sorted(await sql_store.usage_sums(**window, **arguments), key=lambda r: r.key)  # type: ignore[arg-type]
        # The base class's fold in Python, as the memory backend sums: the same arguments, in order.
        ordered = [
            window["since"],
            window["until"],
            arguments["width"],
            arguments.get("offset", 0),
            arguments.get("sessions", False),
            arguments.get("session"),
            arguments.get("models"),
        ]
        in_python = sorted(await EventStore._sum_usage(sql_store, *ordered), key=lambda r: r.key)  # type: ignore[arg-type]
        assert in_sql == in_python, arguments
        assert sum(r.calls for r in in_sql) > 0


async def test_sums_per_day_of_a_zone(store: EventStore) -> None:
    hour = 3_600_000_000
    await store.append([usage(T0 + 21 * hour), usage(T0 + 23 * hour), usage(T0 + 25 * hour)])
    # UTC+2: 23:00 and 01:00 UTC fall on the next day there, 21:00 UTC on the first
    sums = sorted(await store.usage_sums(width=24 * hour, offset=2 * hour), key=lambda r: r.bucket)
    assert [(r.bucket, r.calls) for r in sums] == [(T0 + 21 * hour, 1), (T0 + 23 * hour, 1), (T0 + 25 * hour, 1)]
    # one day of the zone, but two UTC days (so that a price that changed at UTC midnight is kept apart)
    assert [r.session for r in sums] == ["", "", ""]
