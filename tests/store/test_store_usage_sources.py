"""A request reported by an agent's transcript and by its telemetry counts once, on every backend,
as its first source reported it, and the rows say how many of their calls came from telemetry;
a rebuild from the log decides the same."""

from __future__ import annotations

from store.base import EventStore
from store.events import NewEvent
from store.usage import Claims, RequestNames, usage_names

T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z
MINUTE = 60_000_000


def transcript(request: str | None, output: int = 50, read: int = 1000, **extra: object) -> NewEvent:
    payload = {"model": "claude-opus-4-6", "input_tokens": 10, "cache_read_tokens": read, "output_tokens": output}
    return NewEvent("s", "usage", payload | {"request_id": request} | extra, "main", T0 + MINUTE)


def telemetry(request: str | None, output: int = 50, read: int = 1000) -> NewEvent:
    payload = {
        "origin": "telemetry",
        "model": "claude-opus-4-6",
        "input_tokens": 10,
        "cache_read_tokens": read,
        "output_tokens": output,
        "request_id": request,
        "cost_usd": 0.01,
    }
    return NewEvent("s", "usage", payload, "main", T0 + 2 * MINUTE)


def codex(origin: str | None, output: int = 7) -> NewEvent:
    payload = {"model": "gpt-5", "input_tokens": 900, "cached_input_tokens": 800, "output_tokens": output}
    payload |= {"reasoning_output_tokens": 3} | ({"origin": origin} if origin else {})
    return NewEvent("c", "usage", payload, "main", T0 + MINUTE)


async def totals(store: EventStore, session: str = "s") -> tuple[int, int, int]:
    rows = await store.usage_rows(session=session)
    return sum(r.calls for r in rows), sum(r.output_tokens for r in rows), sum(r.telemetry_calls for r in rows)


async def test_a_request_from_both_sources_counts_once_whichever_came_first(store: EventStore) -> None:
    await store.append([transcript("req_a"), telemetry("req_b")])
    await store.append([telemetry("req_a"), transcript("req_b")])  # each the second report of its request

    assert await totals(store) == (2, 100, 1)  # req_a from the transcript, req_b from telemetry


async def test_a_transcripts_revision_of_its_own_request_still_counts(store: EventStore) -> None:
    await store.append([transcript("req_a"), transcript("req_a", output=30, revision=True, context_tokens=1010)])
    await store.append([telemetry("req_a", output=80)])

    assert await totals(store) == (1, 80, 0)


async def test_a_revision_of_a_request_telemetry_reported_first_counts_nothing(store: EventStore) -> None:
    await store.append([telemetry("req_a", output=80)])
    await store.append([transcript("req_a"), transcript("req_a", output=30, revision=True, context_tokens=1010)])

    assert await totals(store) == (1, 80, 1)


async def test_codex_calls_are_matched_by_their_counts(store: EventStore) -> None:
    await store.append([codex(None), codex("telemetry"), codex("telemetry", output=9)])

    assert await totals(store, "c") == (2, 16, 1)


async def test_usage_without_a_request_always_counts(store: EventStore) -> None:
    bare = {"model": "m", "input_tokens": 1, "output_tokens": 2}
    await store.append([NewEvent("s", "usage", bare, "main", T0), NewEvent("s", "usage", bare, "main", T0 + 1)])

    assert await totals(store) == (2, 4, 0)


async def test_a_rebuild_decides_as_the_appends_did(store: EventStore) -> None:
    await store.append([transcript("req_a"), telemetry("req_b")])
    await store.append([telemetry("req_a", output=99), transcript("req_b", output=1)])
    before = sorted(await store.usage_rows(), key=lambda r: r.key)

    await store.rebuild_projections()

    assert sorted(await store.usage_rows(), key=lambda r: r.key) == before
    assert await totals(store) == (2, 100, 1)


async def test_the_summed_rows_keep_the_telemetry_calls(store: EventStore) -> None:
    await store.append([transcript("req_a"), telemetry("req_b"), telemetry("req_c")])

    sums = await store.usage_sums(sessions=True)

    assert [(r.calls, r.telemetry_calls) for r in sums] == [(3, 2)]


async def test_a_request_without_an_id_is_matched_by_its_model_and_prompt(store: EventStore) -> None:
    # An API behind a gateway may return no request id: to the transcript, the telemetry or both.
    await store.append([transcript(None, read=1000), telemetry("req_b", read=2000), transcript(None, read=3000)])
    await store.append([telemetry(None, read=1000), transcript(None, read=2000), telemetry("req_c", read=3000)])

    assert await totals(store) == (3, 150, 1)  # the first and third from the transcript, the second from telemetry


async def test_a_revision_without_an_id_of_a_request_telemetry_reported_first_counts_nothing(store: EventStore) -> None:
    await store.append([telemetry("req_a", output=80)])
    await store.append([transcript(None), transcript(None, output=30, revision=True, context_tokens=1010)])

    assert await totals(store) == (1, 80, 1)


async def test_requests_of_equal_size_are_told_apart_by_their_ids(store: EventStore) -> None:
    await store.append([transcript("req_a"), telemetry("req_b"), transcript("req_c")])

    assert await totals(store) == (3, 150, 1)


def test_claims_name_a_request_alike_from_either_source() -> None:
    sized = "anthropic:claude-opus-4-6:1010"
    with_id, without = (
        RequestNames(("req_a", sized), ("req_a", sized + ":named")),
        RequestNames((sized, sized + ":named"), (sized,)),
    )
    assert usage_names(transcript("req_a").payload) == usage_names(telemetry("req_a").payload) == with_id
    assert usage_names(transcript(None).payload) == usage_names(telemetry(None).payload) == without
    revision = transcript("req_a", output=30, revision=True, context_tokens=1010)
    assert usage_names(revision.payload) == with_id
    codex_call = RequestNames(("openai:900:800:7:3",), ("openai:900:800:7:3",))
    assert usage_names(codex(None).payload) == usage_names(codex("telemetry").payload) == codex_call
    claims = Claims()
    assert [claims.counts("s", e.payload) for e in (telemetry("r"), transcript("r"), telemetry("r"))] == [
        True,
        False,
        True,
    ]
    assert claims.new == [("s", "r", "telemetry"), ("s", sized + ":named", "telemetry")]
