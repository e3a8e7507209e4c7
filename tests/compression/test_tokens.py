"""daemon.compress.tokens: the heuristic's properties, the estimator choice, and its error on real usage."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from transcripts import shared_or_skip

from daemon.compress.tokens import MESSAGE_OVERHEAD, TOOL_OVERHEAD, estimator, event_tokens, payload_tokens
from store.events import Event

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_tokens  # noqa: E402  (the benchmark holds the measurement the band is checked with)

HEURISTIC = estimator("heuristic")
PROSE = "The daemon keeps a tamper-evident log of every event, and compression never deletes any of them. "
CODE = (
    "def fit(events: list[Event], budget: int) -> list[Event]:\n"
    '    return [e for e in events if e.kind != "raw"][:budget]\n'
)


def event(kind: str, payload: dict[str, object]) -> Event:
    return Event(1, "id", "session", "main", kind, 0, (), "digest", None, payload)


def test_empty_text_is_zero_tokens() -> None:
    assert HEURISTIC.count("") == 0
    assert estimator("chars").count("") == 0


def test_count_grows_with_length() -> None:
    counts = [HEURISTIC.count(PROSE * n) for n in range(1, 20)]
    assert counts == sorted(counts)
    assert counts[-1] > counts[0] * 15
    previous = 0
    for end in range(0, len(CODE) + 1, 7):
        current = HEURISTIC.count(CODE[:end])
        assert current >= previous - 1  # a cut word may merge with the next piece
        previous = current


def test_a_word_is_about_a_token_and_cjk_about_a_token_per_character() -> None:
    english = "the quick brown fox jumps over the lazy dog"
    assert 8 <= HEURISTIC.count(english) <= 12
    chinese = "压缩从不删除事件它追加一个压缩事件"  # 17 characters
    assert 15 <= HEURISTIC.count(chinese) <= 22
    # Characters ÷ 4 sees Chinese as four times cheaper than it is.
    assert HEURISTIC.count(chinese) > 3 * estimator("chars").count(chinese)


def test_code_costs_more_per_character_than_prose() -> None:
    prose_rate = HEURISTIC.count(PROSE * 4) / len(PROSE * 4)
    code_rate = HEURISTIC.count(CODE * 4) / len(CODE * 4)
    assert code_rate > prose_rate * 1.2


def test_digits_go_in_groups_and_long_words_in_pieces() -> None:
    assert HEURISTIC.count("1234567890") > HEURISTIC.count("1234")
    assert HEURISTIC.count("internationalization") > HEURISTIC.count("nation")


def test_event_tokens_reads_each_kind() -> None:
    message = event("message", {"role": "user", "text": PROSE})
    assert event_tokens(message) == HEURISTIC.count(PROSE) + MESSAGE_OVERHEAD
    call = event("tool.call", {"tool": "Bash", "tool_use_id": "toolu_1", "input": {"command": "ls -la"}})
    expected = HEURISTIC.count("Bash") + HEURISTIC.count(json.dumps({"command": "ls -la"}, separators=(",", ":")))
    assert event_tokens(call) == expected + TOOL_OVERHEAD
    result = event("tool.result", {"tool_use_id": "toolu_1", "output": CODE, "is_error": False})
    assert event_tokens(result) == HEURISTIC.count(CODE) + TOOL_OVERHEAD
    usage = event("usage", {"input_tokens": 3, "output_tokens": 27, "context_tokens": 25801})
    assert event_tokens(usage) > MESSAGE_OVERHEAD
    hidden = event("thinking", {"text": "", "signature": "A" * 1000, "hidden": True})
    assert event_tokens(hidden) > 100  # withheld thinking still fills the context
    image = event("block", {"role": "user", "type": "image", "block": {"source": {"data": "iVBOR" * 100_000}}})
    assert event_tokens(image) < 5_000  # an image costs by its pixels, not its base64


def test_estimator_names() -> None:
    assert estimator("heuristic").name == "heuristic"
    assert estimator("auto").name in ("heuristic", "tiktoken:o200k_base", "tiktoken:cl100k_base")
    with pytest.raises(ValueError, match="unknown estimator"):
        estimator("words")


def test_tiktoken_is_used_only_when_usable_offline() -> None:
    try:
        exact = estimator("tiktoken")
    except ValueError:
        assert estimator("auto").name == "heuristic"
    else:
        assert exact.count("hello world") == 2
        assert estimator("auto").name == exact.name


def test_payload_tokens_of_odd_payloads() -> None:
    assert payload_tokens("message", {"role": "user"}) > 0  # no text: its JSON
    assert payload_tokens("tool.result", {"output": [{"type": "text", "text": "ok"}]}) > TOOL_OVERHEAD
    assert payload_tokens("tool.call", {"tool": None, "input": None}) >= TOOL_OVERHEAD


# Measured on ../shared/fixtures/transcripts/claude (docs/benchmarks.md, "Token estimation"): the
# heuristic's sum of estimates is 0.91 of the prompts' growth, characters ÷ 4 0.72. The band leaves
# room for a retuning, not for a regression to characters ÷ 4.
RATIO_BAND = (0.85, 1.1)


def test_heuristic_tracks_real_usage_better_than_chars_over_four() -> None:
    root = shared_or_skip("fixtures", "transcripts", "claude")
    found = bench_tokens.fixture_deltas(root)
    assert len(found) > 500
    heuristic = bench_tokens.accuracy(found, HEURISTIC)
    chars = bench_tokens.accuracy(found, estimator("chars"))
    bare = bench_tokens.accuracy(found, estimator("chars"), bare=True)
    assert RATIO_BAND[0] <= heuristic.ratio <= RATIO_BAND[1], heuristic
    assert abs(1 - heuristic.ratio) < abs(1 - chars.ratio)
    assert heuristic.mape < 0.10
    assert heuristic.mape < chars.mape / 2
    assert heuristic.mape < bare.mape / 4
