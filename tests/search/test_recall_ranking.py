"""Hybrid ranking (daemon/search/ranking.py): reciprocal rank fusion of the words' and the
meaning's rankings, each weighed by kind, each hit saying what matched; exact scores."""

from __future__ import annotations

import pytest

from daemon.search.ranking import (
    BOTH,
    MEANING,
    MEANING_WEIGHT,
    RRF_K,
    WORDS,
    WORDS_WEIGHT,
    as_written,
    by_meaning,
    fuse,
    kind_weight,
)
from store.search import SearchHit
from store.vectors import VectorHit


def word_hit(seq: int, score: float, kind: str = "message") -> SearchHit:
    return SearchHit(seq, f"id{seq}", "s", None, kind, seq, f"d{seq}", score, f"«w» {seq}")


def meaning_hit(seq: int, similarity: float, kind: str = "message") -> VectorHit:
    return VectorHit(seq, f"id{seq}", "s", None, kind, seq, f"d{seq}", similarity, f"text of {seq}")


def test_a_hit_both_lists_rank_comes_first_and_says_both() -> None:
    words = [word_hit(1, 9.0), word_hit(2, 5.0)]
    meaning = [meaning_hit(3, 0.8), meaning_hit(2, 0.7)]
    fused = fuse(words, meaning, limit=10)
    assert [(r.hit.seq, r.matched) for r in fused] == [(2, BOTH), (1, WORDS), (3, MEANING)]
    assert fused[0].score == pytest.approx(WORDS_WEIGHT / (RRF_K + 2) + MEANING_WEIGHT / (RRF_K + 2))
    assert fused[1].score == pytest.approx(WORDS_WEIGHT / (RRF_K + 1))
    assert fused[2].score == pytest.approx(MEANING_WEIGHT / (RRF_K + 1))
    assert (fused[0].similarity, fused[1].similarity) == (0.7, None)


def test_a_meaning_only_hit_shows_the_start_of_its_text_and_the_words_keep_their_snippet() -> None:
    fused = fuse([word_hit(1, 3.0)], [meaning_hit(2, 0.5)], limit=10)
    assert [r.hit.snippet for r in fused] == ["«w» 1", "text of 2"]


def test_kinds_are_weighed_before_ranking() -> None:
    assert (kind_weight("note.decision"), kind_weight("tool.result"), kind_weight("usage")) == (1.25, 0.5, 1.0)
    # A note a little less similar than a tool's output ranks above it.
    ranked = by_meaning([meaning_hit(1, 0.6, "tool.result"), meaning_hit(2, 0.5, "note.decision")], limit=5)
    assert [(r.hit.seq, r.score) for r in ranked] == [(2, pytest.approx(0.625)), (1, pytest.approx(0.3))]
    fused = fuse([word_hit(1, 4.0, "tool.result"), word_hit(2, 3.0, "note.decision")], [], limit=5)
    assert [r.hit.seq for r in fused] == [2, 1]


def test_the_meaning_alone_leaves_nothing_out_but_the_fusion_drops_what_is_not_near() -> None:
    assert [r.hit.seq for r in by_meaning([meaning_hit(1, 0.01)], limit=5)] == [1]
    assert fuse([], [meaning_hit(1, 0.01)], limit=5) == []


def test_the_limit_cuts_the_fused_list_and_ties_go_to_the_earlier_event() -> None:
    fused = fuse([], [meaning_hit(5, 0.5), meaning_hit(4, 0.5), meaning_hit(3, 0.4)], limit=2)
    assert [r.hit.seq for r in fused] == [4, 5]


@pytest.mark.parametrize(
    "query",
    ["src/auth/login.py", "tmux-waiting.sh", "lib/spotter/services/tmux.ex", "--no-inbox", "auth.login", "snake_case"],
)
def test_a_path_a_file_a_flag_or_a_dotted_name_is_searched_as_written(query: str) -> None:
    assert as_written(query) and as_written(f"  {query} ")


@pytest.mark.parametrize(
    "query", ["Redis", "which message broker", "job queue", "e.g. the broker", "login-page cookie"]
)
def test_words_and_questions_are_searched_by_meaning_too(query: str) -> None:
    assert not as_written(query)
