"""Search through the store, on every backend: what is found, how it is ranked and narrowed,
snippets, bad queries, atomic batches and rebuilds."""

from __future__ import annotations

import math
from typing import Any

import pytest

from store.base import EventStore
from store.errors import InvalidEvent, UsageError
from store.events import NewEvent
from store.search import MARK_END, MARK_START, MAX_LIMIT, SearchQuery

T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z in microseconds
MINUTE = 60_000_000


def ev(session: str, kind: str, payload: dict[str, Any], minute: int, agent: str | None = "main") -> NewEvent:
    return NewEvent(session=session, kind=kind, payload=payload, agent=agent, ts=T0 + minute * MINUTE)


async def seed(store: EventStore) -> None:
    await store.append(
        [
            ev("auth", "message", {"role": "user", "text": "The login page times out after thirty seconds"}, 0),
            ev("auth", "tool.call", {"tool": "Bash", "input": {"command": "pytest tests/test_login.py"}}, 1),
            ev("auth", "tool.result", {"output": "FAILED test_login_timeout - TimeoutError"}, 2),
            ev("auth", "note.decision", {"text": "raise the pool size", "reason": "login waits for a connection"}, 3),
            ev("auth", "usage", {"input_tokens": 1200, "output_tokens": 40}, 4),
            ev("deploy", "message", {"role": "user", "text": "deploy the login service to staging"}, 5, "ops"),
            ev("deploy", "memory.set", {"key": "staging_host", "value": "stage-3.internal"}, 6, "ops"),
            ev("deploy", "compression", {"summary": "earlier: the deploy script was rewritten", "ratio": 0.3}, 7),
        ]
    )


async def seqs(store: EventStore, text: str, **filters: Any) -> list[int]:
    return sorted(hit.seq for hit in await store.search(SearchQuery(text, **filters)))


async def test_every_indexed_kind_is_found(store: EventStore) -> None:
    await seed(store)
    assert await seqs(store, "thirty") == [1]  # message text
    assert await seqs(store, "pytest") == [2]  # tool input
    assert await seqs(store, "TimeoutError") == [3]  # tool output
    assert await seqs(store, "pool") == [4]  # note
    assert await seqs(store, "stage") == [7]  # memory value
    assert await seqs(store, "rewritten") == [8]  # compression summary
    assert await seqs(store, "1200") == []  # usage figures are not text


async def test_a_hit_says_where_the_event_is(store: EventStore) -> None:
    await seed(store)
    [hit] = await store.search(SearchQuery("service"))
    event = await store.get_by_seq(6)
    assert (hit.seq, hit.id, hit.session, hit.agent, hit.kind, hit.ts, hit.digest) == (
        6,
        event.id,
        "deploy",
        "ops",
        "message",
        event.ts,
        event.digest,
    )
    assert math.isfinite(hit.score)


async def test_query_syntax(store: EventStore) -> None:
    await seed(store)
    assert await seqs(store, "login") == [1, 2, 3, 4, 6]
    assert await seqs(store, "login deploy") == [6]  # implicit AND
    assert await seqs(store, "pytest OR staging") == [2, 6, 7]
    assert await seqs(store, "login NOT deploy") == [1, 2, 3, 4]
    assert await seqs(store, '"login service"') == [6]
    assert await seqs(store, "rewrit*") == [8]
    assert await seqs(store, "(pool OR pytest) AND login") == [2, 4]
    assert await seqs(store, "test_login") == [2, 3]  # a word with _ is a phrase of its parts


async def test_better_matches_rank_first(store: EventStore) -> None:
    await store.append(
        [
            ev("r", "message", {"role": "user", "text": "timeout " * 5 + "in the pool"}, 0),
            ev("r", "message", {"role": "user", "text": "one timeout among many other words " + "filler " * 60}, 1),
            ev("r", "message", {"role": "user", "text": "nothing relevant here at all"}, 2),
            ev("r", "message", {"role": "user", "text": "a rare zebra and a timeout"}, 3),
        ]
    )
    hits = await store.search(SearchQuery("timeout"))
    assert [h.seq for h in hits][0] == 1
    assert [h.seq for h in hits][-1] == 2  # one mention in a long text ranks last
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # A rare term outweighs a common one.
    assert (await store.search(SearchQuery("zebra OR timeout")))[0].seq == 4


async def test_filters_narrow_the_hits(store: EventStore) -> None:
    await seed(store)
    assert await seqs(store, "login", session="deploy") == [6]
    assert await seqs(store, "login", agent="ops") == [6]
    assert await seqs(store, "login", kinds=("tool.*",)) == [2, 3]
    assert await seqs(store, "login", kinds=("note.decision", "message")) == [1, 4, 6]
    assert await seqs(store, "login", since=T0 + 2 * MINUTE) == [3, 4, 6]
    assert await seqs(store, "login", until=T0 + 2 * MINUTE) == [1, 2]
    assert len(await store.search(SearchQuery("login", limit=2))) == 2


async def test_snippets_mark_the_matched_words(store: EventStore) -> None:
    await seed(store)
    [hit] = await store.search(SearchQuery("thirty"))
    assert hit.snippet == f"The login page times out after {MARK_START}thirty{MARK_END} seconds"
    [hit] = await store.search(SearchQuery('"login service"'))
    assert f"{MARK_START}login service{MARK_END}" in hit.snippet
    long_text = "alpha " * 200 + "needle " + "omega " * 200
    await store.append([ev("long", "tool.result", {"output": long_text}, 9)])
    [hit] = await store.search(SearchQuery("needle"))
    assert f"{MARK_START}needle{MARK_END}" in hit.snippet
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert len(hit.snippet) < 200


@pytest.mark.parametrize("text", ['"unbalanced', "login AND", "(login", "login)", "NOT login", "OR", "login-timeout"])
async def test_a_malformed_query_is_a_usage_error_with_a_hint(store: EventStore, text: str) -> None:
    await seed(store)
    with pytest.raises(UsageError) as caught:
        await store.search(SearchQuery(text))
    assert repr(text) in caught.value.message
    assert caught.value.hint is not None and "double quotes" in caught.value.hint


@pytest.mark.parametrize(("text", "limit"), [("", 20), ("   ", 20), ("login", 0), ("login", MAX_LIMIT + 1)])
async def test_an_empty_query_or_a_bad_limit_is_refused(store: EventStore, text: str, limit: int) -> None:
    with pytest.raises(UsageError):
        await store.search(SearchQuery(text, limit=limit))


async def test_events_are_searchable_once_appended_and_a_failed_batch_adds_nothing(store: EventStore) -> None:
    assert await seqs(store, "quokka") == []
    with pytest.raises(InvalidEvent):
        await store.append([ev("s", "message", {"text": "quokka"}, 0), ev("s", "message", {"x": math.nan}, 1)])
    assert await seqs(store, "quokka") == []
    await store.append([ev("s", "message", {"text": "quokka"}, 0)])
    assert await seqs(store, "quokka") == [1]
    # Appending the same event again (an idempotency key) indexes it once.
    again = NewEvent(session="s", kind="message", payload={"text": "wombat"}, key="k1", ts=T0)
    await store.append([again])
    await store.append([again])
    assert await seqs(store, "wombat") == [2]


async def test_rebuild_gives_the_same_results(store: EventStore) -> None:
    await seed(store)
    queries = ["login", "pytest OR staging", "rewrit*", '"login service"', "login NOT deploy"]
    before = [await store.search(SearchQuery(q)) for q in queries]
    assert await store.rebuild_search_index() == 7  # every event but the usage one has text
    assert [await store.search(SearchQuery(q)) for q in queries] == before
