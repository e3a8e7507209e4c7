"""The usage projection: calls and tokens per quarter of an hour, session, agent, model and prompt
class, kept by each append (SQLite) or folded from the events (memory), the same either way, and
rebuilt from the log."""

from __future__ import annotations

import random
from pathlib import Path

from store.base import EventStore
from store.events import NewEvent
from store.sqlite import SqliteStore
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


async def test_a_revision_adds_output_and_no_call(store: EventStore) -> None:
    revision = {"model": "claude-opus-4-6", "output_tokens": 40, "context_tokens": 1005, "revision": True}
    await store.append([usage(T0), NewEvent("s", "usage", revision, "main", T0 + MINUTE)])
    [row] = await store.usage_rows()
    assert (row.calls, row.output_tokens, row.input_tokens) == (1, 50, 5)


async def test_usage_without_model_or_agent_is_kept_under_empty_names(store: EventStore) -> None:
    await store.append([NewEvent("s", "usage", {"input_tokens": 7, "output_tokens": 1}, None, T0)])
    [row] = await store.usage_rows()
    assert (row.agent, row.model, row.calls, row.input_tokens) == ("", "", 1, 7)


async def test_the_sqlite_projection_is_the_fold_of_the_events(sqlite_store: SqliteStore) -> None:
    """Many appends of random usage, in batches: the table kept by the appends equals the events
    folded afresh (the memory backend's way), and a rebuild gives it again."""
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
        await sqlite_store.append(batch)
    kept = sorted(await sqlite_store.usage_rows(), key=lambda r: r.key)
    folded = sorted(await EventStore.usage_rows(sqlite_store), key=lambda r: r.key)
    assert kept == folded
    await sqlite_store.rebuild_projections()
    assert sorted(await sqlite_store.usage_rows(), key=lambda r: r.key) == folded


async def test_pruned_usage_leaves_the_projection(sqlite_store: SqliteStore, tmp_path: Path) -> None:
    await sqlite_store.append([usage(T0), usage(T0 + 2 * BUCKET_US)])
    await sqlite_store.prune("s", before=T0 + BUCKET_US)
    rows: list[UsageRow] = await sqlite_store.usage_rows()
    assert [(r.bucket, r.calls) for r in rows] == [(T0 + 2 * BUCKET_US, 1)]
