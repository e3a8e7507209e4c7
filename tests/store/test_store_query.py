"""Queries over the log, and the sessions it holds."""

from __future__ import annotations

import json
from typing import Any

import pytest

from store.base import EventQuery, EventStore, SessionInfo
from store.errors import Ambiguous, NotFound
from store.events import NewEvent

T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z in microseconds
SECOND = 1_000_000

# (session, kind, agent, seconds after T0): seq is the position in this list, plus one.
LOG = [
    ("alpha", "message", "user", 0),
    ("alpha", "tool.call", "claude", 1),
    ("beta", "message", "user", 2),
    ("alpha", "tool.result", "claude", 3),
    ("alpha", "tool", "claude", 4),
    ("beta", "toolbox.open", "codex", 5),
    ("alpha", "tool.call.retry", "claude", 6),
    ("alpha", "usage", None, 7),
    ("beta", "tool.call", "codex", 8),
    ("alpha", "note.decision", "claude", 9),
]


async def load(store: EventStore) -> None:
    await store.append(
        [
            NewEvent(session, kind, {"n": n}, agent, T0 + s * SECOND)
            for n, (session, kind, agent, s) in enumerate(LOG, 1)
        ]
    )


async def seqs(store: EventStore, **query: Any) -> list[int]:
    return [e.seq for e in await store.query(EventQuery(**query))]


async def test_query_without_filters_returns_the_whole_log_in_seq_order(store: EventStore) -> None:
    await load(store)

    events = await store.query(EventQuery())

    assert [e.seq for e in events] == list(range(1, 11))
    assert [e.payload["n"] for e in events] == list(range(1, 11))


async def test_query_by_session(store: EventStore) -> None:
    await load(store)

    assert await seqs(store, session="alpha") == [1, 2, 4, 5, 7, 8, 10]
    assert await seqs(store, session="beta") == [3, 6, 9]
    assert await seqs(store, session="gamma") == []


async def test_query_by_exact_kind(store: EventStore) -> None:
    await load(store)

    assert await seqs(store, session="alpha", kinds=("tool.call",)) == [2]
    assert await seqs(store, kinds=("tool.call",)) == [2, 9]
    assert await seqs(store, kinds=("message", "usage")) == [1, 3, 8]
    assert await seqs(store, kinds=("tool.cal",)) == []


async def test_query_by_kind_prefix_matches_the_kind_and_its_subkinds_only(
    store: EventStore,
) -> None:
    await load(store)

    # "tool.*" takes tool, tool.call, tool.result and tool.call.retry, never toolbox.open.
    assert await seqs(store, kinds=("tool.*",)) == [2, 4, 5, 7, 9]
    assert await seqs(store, session="alpha", kinds=("tool.call.*",)) == [2, 7]
    assert await seqs(store, kinds=("tool.*", "note.*")) == [2, 4, 5, 7, 9, 10]


async def test_a_kind_written_with_a_bang_is_left_out(store: EventStore) -> None:
    await load(store)

    assert await seqs(store, kinds=("!tool.*",)) == [1, 3, 6, 8, 10]
    assert await seqs(store, kinds=("!message", "!usage")) == [2, 4, 5, 6, 7, 9, 10]
    assert await seqs(store, kinds=("tool.*", "!tool.call")) == [4, 5, 7]
    assert await seqs(store, session="alpha", kinds=("tool.*", "!tool.call.*")) == [4, 5]


async def test_count_is_how_many_events_a_query_matches_whatever_its_limit(store: EventStore) -> None:
    await load(store)

    assert await store.count(EventQuery()) == 10
    assert await store.count(EventQuery(session="alpha", before_seq=8)) == 5
    assert await store.count(EventQuery(kinds=("!tool.*",), limit=2, order="desc")) == 5
    assert await store.count(EventQuery(session="gamma")) == 0


async def test_query_by_time_includes_since_and_excludes_until(store: EventStore) -> None:
    await load(store)

    assert await seqs(store, since=T0 + 3 * SECOND) == [4, 5, 6, 7, 8, 9, 10]
    assert await seqs(store, until=T0 + 3 * SECOND) == [1, 2, 3]
    assert await seqs(store, since=T0 + 3 * SECOND, until=T0 + 5 * SECOND) == [4, 5]
    assert await seqs(store, since=T0 + 3 * SECOND + 1, until=T0 + 5 * SECOND + 1) == [5, 6]


async def test_query_by_time_uses_timestamps_not_seq_order(store: EventStore) -> None:
    # Imported events keep the source's time, which need not follow the order they arrive in.
    await store.append([NewEvent("s", "message", {"n": n}, ts=T0 + s * SECOND) for n, s in enumerate([5, 1, 9, 3])])

    assert await seqs(store, since=T0 + 2 * SECOND, until=T0 + 6 * SECOND) == [1, 4]


async def test_query_by_seq_range_excludes_both_bounds(store: EventStore) -> None:
    await load(store)

    assert await seqs(store, after_seq=7) == [8, 9, 10]
    assert await seqs(store, before_seq=3) == [1, 2]
    assert await seqs(store, after_seq=2, before_seq=6) == [3, 4, 5]
    assert await seqs(store, session="alpha", after_seq=2, before_seq=8) == [4, 5, 7]


async def test_query_order_and_limit(store: EventStore) -> None:
    await load(store)

    assert await seqs(store, order="desc") == list(range(10, 0, -1))
    assert await seqs(store, limit=3) == [1, 2, 3]
    # desc with a limit gives the latest events, newest first.
    assert await seqs(store, limit=3, order="desc") == [10, 9, 8]
    assert await seqs(store, session="beta", limit=2, order="desc") == [9, 6]
    assert await seqs(store, limit=0) == []


async def test_query_combines_all_filters(store: EventStore) -> None:
    await load(store)

    assert await seqs(
        store,
        session="alpha",
        kinds=("tool.*",),
        since=T0 + 1 * SECOND,
        until=T0 + 9 * SECOND,
        after_seq=2,
        limit=2,
        order="desc",
    ) == [7, 5]


async def test_sessions_report_counts_seqs_times_agents_kinds_and_head(store: EventStore) -> None:
    await load(store)
    events = await store.query(EventQuery())

    alpha, beta = await store.session("alpha"), await store.session("beta")

    assert alpha == SessionInfo(
        session="alpha",
        events=7,
        first_seq=1,
        last_seq=10,
        first_ts=T0,
        last_ts=T0 + 7 * SECOND,  # last active: its note at 9 s is not the agent's own activity
        head=events[9].id,
        agents={"user": 1, "claude": 5},
        kinds={
            "message": 1,
            "tool.call": 1,
            "tool.result": 1,
            "tool": 1,
            "tool.call.retry": 1,
            "usage": 1,
            "note.decision": 1,
        },
    )
    assert beta == SessionInfo(
        session="beta",
        events=3,
        first_seq=3,
        last_seq=9,
        first_ts=T0 + 2 * SECOND,
        last_ts=T0 + 8 * SECOND,
        head=events[8].id,
        agents={"user": 1, "codex": 2},
        kinds={"message": 1, "toolbox.open": 1, "tool.call": 1},
    )
    assert await store.sessions() == [beta, alpha]  # most recently active first (alpha's note is not)


async def test_sessions_follow_appends_across_batches(store: EventStore) -> None:
    await load(store)
    [late] = await store.append([NewEvent("beta", "message", {"n": 11}, "user", T0)])

    beta = await store.session("beta")

    assert (beta.events, beta.last_seq, beta.head) == (4, 11, late.event.id)
    # An imported event older than the rest moves first_ts back, not last_ts.
    assert (beta.first_ts, beta.last_ts) == (T0, T0 + 8 * SECOND)
    assert beta.agents == {"user": 2, "codex": 2}
    assert beta.kinds["message"] == 2
    # Sessions are listed by when they were last active, not by when the log last heard of them:
    # beta at 8 s, alpha at 7 s (its note at 9 s is toka's, not the agent's).
    assert [s.session for s in await store.sessions()] == ["beta", "alpha"]


async def test_sessions_of_an_empty_store_is_empty(store: EventStore) -> None:
    assert await store.sessions() == []


async def test_session_resolves_a_unique_prefix(store: EventStore) -> None:
    await store.append([NewEvent(name, "message", {}) for name in ("sess-1", "sess-10", "other")])

    assert (await store.session("oth")).session == "other"
    assert (await store.session("sess-10")).session == "sess-10"
    # An exact name wins even when it is also the prefix of another session.
    assert (await store.session("sess-1")).session == "sess-1"


async def test_session_prefix_shared_by_two_sessions_raises_ambiguous(store: EventStore) -> None:
    await store.append([NewEvent(name, "message", {}) for name in ("sess-1", "sess-10", "other")])

    with pytest.raises(Ambiguous):
        await store.session("sess")


@pytest.mark.parametrize("name", ["nope", "sess-2", "ess"])
async def test_session_with_no_match_raises_not_found(store: EventStore, name: str) -> None:
    await store.append([NewEvent(n, "message", {}) for n in ("sess-1", "sess-10", "other")])

    with pytest.raises(NotFound):
        await store.session(name)


async def test_query_json_is_the_json_of_query(store: EventStore) -> None:
    await store.append(
        [
            NewEvent("s", "message", {"text": 'quote " and \\ and ünïcode 😀', "z": 1, "a": [1.5, None]}, "main"),
            NewEvent("s", "tool.call", {"big": "x" * 5000}, key="k\u2028"),
            NewEvent("t", "note", {}, None, parents=()),
        ]
    )
    query = EventQuery(order="desc", limit=5)
    assert [(seq, json.loads(text)) for seq, text in await store.query_json(query)] == [
        (e.seq, e.to_json()) for e in await store.query(query)
    ]
