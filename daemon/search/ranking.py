"""Hybrid ranking: the hits of the words (the full-text index) and of the meaning (the vectors)
fused into one list, each hit saying why it matched (docs/recall.md).

Reciprocal rank fusion: a hit's score is the sum, over the lists it is in, of
``weight / (RRF_K + rank)``, so that a hit both lists rank well comes first and neither list's
scale (BM25 against cosine) matters. Each list is ranked after its scores are weighed by the
event's kind (:data:`KIND_WEIGHTS`): a note, a memory value or a summary is what a question about
the past most often means; a tool's output rarely is. The meaning list leaves out hits whose
similarity is under :data:`MIN_SIMILARITY`, so that a query with no near text gets its word matches
alone rather than the least far of everything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from store.kinds import kind_matches
from store.search import SearchHit
from store.vectors import VectorHit

# Smoothing of the ranks (the value of Cormack et al.'s paper, which most hybrid search uses): the
# first hit of a list counts 1/61, the tenth 1/70, so one list's first does not drown the other.
RRF_K = 60
# How much each list counts: the words are exact evidence, the meaning a guess; a hit only the
# meaning finds ranks below one the words find at the same rank.
WORDS_WEIGHT = 1.0
MEANING_WEIGHT = 0.9
# A kind's weight multiplies its hits' scores before each list is ranked (the first match wins;
# any other kind counts 1).
KIND_WEIGHTS: tuple[tuple[str, float], ...] = (
    ("note.*", 1.25),
    ("memory.set", 1.2),
    ("handoff", 1.15),
    ("compression", 1.15),
    ("compaction.summary", 1.15),
    ("compaction", 1.15),
    ("session.title", 1.1),
    ("message", 1.0),
    ("thinking", 0.85),
    ("tool.call", 0.6),
    ("tool.result", 0.5),
)
# Cosine under which a text is not near enough to count as meant. Low: WordLlama's cosines of a
# question and the message it means run from 0.1 to 0.6 (benchmarks/bench_recall.py), and at 0.2
# a third of the meant messages were left out.
MIN_SIMILARITY = 0.05
# Characters of a meaning-only hit's text shown as its snippet.
SNIPPET_CHARS = 200

# A query that is one token holding a path's or a name's punctuation (``src/auth/login.py``,
# ``tmux-waiting.sh``, ``--no-inbox``, ``auth.login``) asks for that text: its word matches are what
# is meant, and the meaning of a path's pieces only finds text that is not it.
AS_WRITTEN = re.compile(r"\S*\w[/.\-_:]+\w\S*|--?\w\S*")

WORDS, MEANING, BOTH = "words", "meaning", "both"
NOTHING: None = None  # a recall item that is there for being recent or a summary, not for matching


def kind_weight(kind: str) -> float:
    for pattern, weight in KIND_WEIGHTS:
        if kind_matches(kind, (pattern,)):
            return weight
    return 1.0


@dataclass(frozen=True, slots=True)
class Ranked:
    """A hit of the fused list: ``matched`` is words, meaning or both; ``similarity`` the cosine
    when the meaning found it."""

    hit: SearchHit
    score: float
    matched: str
    similarity: float | None


def head(text: str, width: int = SNIPPET_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def as_search_hit(hit: VectorHit) -> SearchHit:
    return SearchHit(
        hit.seq, hit.id, hit.session, hit.agent, hit.kind, hit.ts, hit.digest, hit.similarity, head(hit.text)
    )


def as_written(query: str) -> bool:
    """Whether ``query`` names a text to find as written (a path, a file, a flag, a dotted or
    hyphenated name), not a meaning: its word matches alone answer it when there are any."""
    return AS_WRITTEN.fullmatch(query.strip()) is not None


def by_words(hits: list[SearchHit]) -> list[Ranked]:
    """The full-text hits alone, as they ranked."""
    return [Ranked(hit, hit.score, WORDS, None) for hit in hits]


def by_meaning(hits: list[VectorHit], limit: int) -> list[Ranked]:
    """The vector hits alone, weighed by kind; the score is the weighed similarity."""
    weighed = sorted(hits, key=lambda hit: (-hit.similarity * kind_weight(hit.kind), hit.seq))
    return [
        Ranked(as_search_hit(hit), hit.similarity * kind_weight(hit.kind), MEANING, hit.similarity)
        for hit in weighed[:limit]
    ]


def fuse(words: list[SearchHit], meaning: list[VectorHit], limit: int) -> list[Ranked]:
    """Both lists in one, by reciprocal rank fusion of their kind-weighed ranks."""
    meaning = [hit for hit in meaning if hit.similarity >= MIN_SIMILARITY]
    score: dict[int, float] = {}
    first: dict[int, SearchHit] = {}
    similarity: dict[int, float] = {}
    found_by_words: set[int] = set()
    # Full-text scores are higher for better matches on every backend (BM25 negated, ts_rank).
    for rank, hit in enumerate(sorted(words, key=lambda hit: (-hit.score * kind_weight(hit.kind), hit.seq)), 1):
        score[hit.seq] = score.get(hit.seq, 0.0) + WORDS_WEIGHT / (RRF_K + rank)
        first[hit.seq] = hit
        found_by_words.add(hit.seq)
    for rank, vector_hit in enumerate(
        sorted(meaning, key=lambda hit: (-hit.similarity * kind_weight(hit.kind), hit.seq)), 1
    ):
        score[vector_hit.seq] = score.get(vector_hit.seq, 0.0) + MEANING_WEIGHT / (RRF_K + rank)
        first.setdefault(vector_hit.seq, as_search_hit(vector_hit))
        similarity[vector_hit.seq] = vector_hit.similarity
    order = sorted(score, key=lambda seq: (-score[seq], seq))[:limit]
    return [
        Ranked(first[seq], score[seq], _why(seq in found_by_words, seq in similarity), similarity.get(seq))
        for seq in order
    ]


def _why(words: bool, meaning: bool) -> str:
    return BOTH if words and meaning else WORDS if words else MEANING
