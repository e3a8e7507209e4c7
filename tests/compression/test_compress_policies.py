"""The policies on a scripted session: what each one compresses and keeps, determinism, the
already-fits case, large payloads cited by digest, and the payload's JSON shape."""

from __future__ import annotations

import json
from typing import Any

import pytest
from compress_support import estimate, scripted, working_session

from daemon.compress.engine import SUMMARY_SHARE, compress, scores, summary_event
from daemon.compress.model import Compression
from daemon.contract.policies import CompressionPolicy, choices_of
from store.errors import UsageError
from store.events import Event, canonical_json


def target_of(events: list[Event], share: float = 0.375) -> int:
    return int(sum(estimate(e) for e in events) * share)


def run(events: list[Event], policy: str, share: float = 0.375, **options: Any) -> Compression:
    return compress(events, policy=policy, target_tokens=target_of(events, share), tokens=estimate, **options)


@pytest.mark.parametrize("policy", choices_of(CompressionPolicy))
def test_a_session_that_already_fits_is_left_alone(policy: str) -> None:
    events = working_session()
    total = sum(estimate(e) for e in events)

    result = compress(events, policy=policy, target_tokens=total, tokens=estimate)

    assert not result.compressed
    assert (result.first_seq, result.last_seq, result.events_in_range) == (None, None, 0)
    assert (result.summary, result.kept_seqs, result.elided, result.summarizer) == ("", (), (), None)
    assert result.tokens_before == result.tokens_after == total
    assert (result.ratio, result.tokens_saved) == (1.0, 0)
    assert result.to_json()["ratio"] == 1.0


@pytest.mark.parametrize("policy", choices_of(CompressionPolicy))
def test_an_empty_session_is_left_alone(policy: str) -> None:
    result = compress([], policy=policy, target_tokens=0, tokens=estimate)
    assert not result.compressed and result.ratio == 1.0 and result.tokens_after == 0


@pytest.mark.parametrize("policy", choices_of(CompressionPolicy))
def test_the_same_events_give_the_same_payload(policy: str) -> None:
    first = run(working_session(), policy)
    again = run(working_session(), policy)  # imported afresh: new objects, the same events

    assert first.compressed
    assert canonical_json(first.to_json()) == canonical_json(again.to_json())


@pytest.mark.parametrize("policy", choices_of(CompressionPolicy))
def test_no_cut_falls_between_a_call_and_its_result(policy: str) -> None:
    events = working_session()
    for share in (0.2, 0.3, 0.375, 0.5, 0.7):
        result = run(events, policy, share)
        assert result.tokens_after <= result.target_tokens
        rest = [e for e in events if e.seq > (result.last_seq or 0)]
        calls = {e.payload.get("tool_use_id") for e in rest if e.kind == "tool.call"}
        orphans = [e for e in rest if e.kind == "tool.result" and e.payload["tool_use_id"] not in calls]
        assert orphans == []


def test_fifo_drops_just_enough_of_the_oldest_events() -> None:
    events = working_session()
    result = run(events, "fifo")
    rest = [e for e in events if e.seq > (result.last_seq or 0)]
    note_size = estimate(summary_event(result.summary, events[0].session))

    assert result.tokens_after == sum(estimate(e) for e in rest) + note_size <= result.target_tokens
    # One event fewer in the range would not fit (unless that event is a result tied to its call).
    first_kept = events.index(rest[0])
    assert sum(estimate(e) for e in events[first_kept - 1 :]) + note_size > result.target_tokens
    assert result.summary.startswith(f"Dropped {result.events_in_range} events, seq {events[0].seq}–")
    assert f"the context resumes at seq {rest[0].seq}" in result.summary


def test_window_keeps_the_newest_events_from_a_message_on() -> None:
    events = working_session()
    result = run(events, "window")
    rest = [e for e in events if e.seq > (result.last_seq or 0)]

    assert rest[0].kind == "message"
    assert result.tokens_after <= result.target_tokens
    assert result.summary.startswith("Dropped ") and result.summarizer is None


def test_summarize_keeps_the_newest_events_and_summarizes_the_rest() -> None:
    events = working_session()
    result = run(events, "summarize")
    summary = result.summary

    assert result.summary_tokens <= result.target_tokens * SUMMARY_SHARE
    assert result.summary_tokens == estimate(summary_event(summary, events[0].session))
    assert "Original request:\nFix the login timeout in auth/session.py" in summary
    assert "[>] Raise the retry budget" in summary and "[x] Reproduce the timeout" in summary
    assert "modified auth/part_0.py (Edit ×1)" in summary
    assert "Retry 3 times with backoff (because: the upstream is flaky)" in summary
    assert "Bash (pytest -q tests/auth): FAILED tests/auth/test_session.py::test_timeout" in summary
    assert "recovered later" in summary
    assert summary.startswith(f"Summary of {result.events_in_range} events, seq {events[0].seq}–{result.last_seq}")


def test_repeated_tool_output_is_referenced_not_repeated() -> None:
    events = working_session()
    result = run(events, "summarize", 0.6)
    passed = [e for e in events if e.kind == "tool.result" and e.payload["output"] == "12 passed"]
    covered = [e for e in passed if e.seq <= (result.last_seq or 0)]

    assert len(covered) >= 3
    assert result.summary.count("result ok: 12 passed") <= 1
    assert f"(same output as seq {covered[0].seq})" in result.summary
    assert "tool results that repeat an earlier output" in result.summary


def test_a_large_payload_is_cited_by_digest_and_size() -> None:
    events = working_session()
    failing = next(e for e in events if e.kind == "tool.result" and e.payload["is_error"])
    result = run(events, "summarize")
    size = len(canonical_json(failing.payload))

    assert size > 2048
    assert f"[blob {failing.digest} {size}]" in result.summary
    assert " ".join(failing.payload["output"].split()) not in " ".join(result.summary.split())
    assert f"[{len(failing.payload['output'])} chars]" in result.summary
    cited = {e.digest: e for e in result.elided}
    assert cited[failing.digest].to_json() == {
        "digest": failing.digest,
        "size": size,
        "kind": "tool.result",
        "seq": failing.seq,
    }


def test_the_summary_stays_within_its_budget_dropping_the_least_important_first() -> None:
    events = working_session(rounds=40)
    budgets = []
    for share in (0.05, 0.1, 0.2, 0.375):
        result = run(events, "summarize", share)
        budgets.append(result.summary_tokens)
        assert result.summary_tokens <= result.target_tokens * SUMMARY_SHARE
        assert result.tokens_after <= result.target_tokens
        # The header and the request go last.
        assert result.summary.startswith("Summary of ")
    small = run(events, "summarize", 0.1).summary
    assert "Fix the login timeout" in small
    assert "Last exchanges" not in small or "Files changed" in small
    assert budgets == sorted(budgets)


def test_importance_keeps_requests_decisions_errors_and_todos_over_chatter() -> None:
    events = working_session(rounds=40)
    result = run(events, "importance", 0.3)
    kept = {e.seq: e for e in events if e.seq in result.kept_seqs}
    kinds = {(e.kind, e.payload.get("role"), e.payload.get("tool")) for e in kept.values()}
    request = next(e for e in events if e.kind == "message" and e.payload["role"] == "user")
    decision = next(e for e in events if e.kind == "note.decision")
    todo = next(e for e in events if e.payload.get("tool") == "TodoWrite")
    error = next(e for e in events if e.kind == "tool.result" and e.payload["is_error"])

    assert {request.seq, decision.seq, todo.seq, error.seq} <= set(kept)
    assert list(result.kept_seqs) == sorted(result.kept_seqs)
    # Long read output is the first thing left out: kept only once everything that scores higher is.
    covered = [e for e in events if e.seq <= (result.last_seq or 0)]
    ranked = dict(zip((e.seq for e in covered), scores(covered), strict=True))
    long_reads = [e for e in covered if e.kind == "tool.result" and e.payload["output"].startswith("line ")]
    assert {e.seq for e in long_reads} - set(kept), "the budget does not hold every read"
    if {e.seq for e in long_reads} & set(kept):
        assert all(seq in kept for seq, score in ranked.items() if score > ranked[long_reads[0].seq])
    assert ("usage", None, None) not in kinds
    assert result.tokens_after <= result.target_tokens
    # The newest messages and what follows them stay, whatever their score.
    assert events[-1].seq > (result.last_seq or 0) and events[-2].seq > (result.last_seq or 0)
    assert "Fix the login timeout" in result.summary


def test_importance_scores_rank_the_kinds_of_events() -> None:
    events = working_session(rounds=3)
    ranked = dict(zip((e.seq for e in events), scores(events), strict=True))

    def score_of(predicate: Any) -> int:
        return ranked[next(e.seq for e in events if predicate(e))]

    request = score_of(lambda e: e.kind == "message" and e.payload["role"] == "user")
    decision = score_of(lambda e: e.kind == "note.decision")
    error = score_of(lambda e: e.kind == "tool.result" and e.payload["is_error"])
    edit = score_of(lambda e: e.payload.get("tool") == "Edit")
    chatter = score_of(lambda e: e.kind == "message" and e.payload["role"] == "assistant")
    long_output = score_of(lambda e: e.kind == "tool.result" and e.payload["output"].startswith("line "))
    usage = score_of(lambda e: e.kind == "usage")
    assert request > decision > error > edit > chatter > long_output > usage == 0


def test_summary_and_command_line_are_masked_with_the_callers_function() -> None:
    events = working_session(secret="alice@example.com")

    def mask(text: str) -> str:
        return text.replace("alice@example.com", "<email>")

    result = run(events, "summarize", redact=mask, summarizer="/nonexistent/tool --key alice@example.com")

    assert "alice@example.com" not in json.dumps(result.to_json())
    assert "Fix the login timeout in auth/session.py <email>" in result.summary
    assert result.summarizer is not None and result.summarizer.command == "/nonexistent/tool --key <email>"


def test_the_payload_has_the_documented_shape_and_reads_back() -> None:
    result = run(working_session(), "importance")
    data = json.loads(json.dumps(result.to_json()))

    assert list(data) == [
        "format",
        "policy",
        "first_seq",
        "last_seq",
        "first_event",
        "last_event",
        "events_in_range",
        "summary",
        "kept_seqs",
        "summarizer",
        "elided",
        "target_tokens",
        "tokens_before",
        "tokens_after",
        "summary_tokens",
        "tokens_saved",
        "ratio",
    ]
    assert data["format"] == 1 and data["policy"] == "importance"
    assert data["summarizer"] == {"kind": "extractive", "command": None, "fallback": None, "clipped": False}
    assert Compression.from_json(data) == result


def test_a_summary_of_events_after_an_earlier_range_cites_the_traces_request() -> None:
    from daemon.handoff import first_request

    events = working_session()
    original = first_request(events)
    later = events[10:]
    result = compress(
        later, policy="summarize", target_tokens=target_of(later), tokens=estimate, original_request=original
    )
    assert "Original request:\nFix the login timeout" in result.summary


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"policy": "lru", "target_tokens": 10}, "unknown compression policy 'lru'"),
        ({"policy": "fifo", "target_tokens": -1}, "must not be negative"),
        ({"policy": "importance", "target_tokens": 10, "keep_last": -2}, "keep_last"),
    ],
)
def test_bad_arguments_are_usage_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        compress(working_session(rounds=1), tokens=estimate, **options)


def test_a_target_too_small_for_anything_compresses_everything() -> None:
    events = scripted([("message", {"role": "user", "text": "hello " * 200})] * 3)
    result = compress(events, policy="summarize", target_tokens=40, tokens=estimate)

    assert result.events_in_range == 3 and result.tokens_after == result.summary_tokens <= 40
