"""A parsed query (store/search_syntax.py) matched against the words of a text, in time linear in
the text's length for a query within its bounds: the memory backend's search, the PostgreSQL
backend's check of a partial ``tsvector``, and every backend's snippets.

A text's words are joined by spaces once (:class:`Words`), so that the places a phrase stands at
are found by ``str.find`` of the phrase's words joined the same way; each distinct phrase is looked
for once however often the query repeats it.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

from store.search import SNIPPET_TOKENS, snippet, tokens
from store.search_syntax import Near, Phrase, Query, parse_query


class Words:
    """The words of one text, joined so that a phrase is found by ``str.find``."""

    def __init__(self, words: list[str]) -> None:
        self.count = len(words)
        self.joined = " " + " ".join(words) + " "
        self._found: dict[Phrase, list[int]] = {}

    def find(self, phrase: Phrase) -> list[int]:
        """Positions (word indexes) where ``phrase`` starts, its last word a prefix when it is one."""
        found = self._found.get(phrase)
        if found is None:
            found = self._found[phrase] = list(self._scan(phrase)) if phrase.words else []
        return found

    def _scan(self, phrase: Phrase) -> Iterator[int]:
        needle = " " + " ".join(phrase.words) + ("" if phrase.prefix else " ")
        joined, index, counted = self.joined, 0, 0
        at = joined.find(needle)
        while at >= 0:
            index += joined.count(" ", counted, at)  # a word's index is the spaces before it
            counted = at
            yield index
            at = joined.find(needle, at + 1)


def _positive(node: Any) -> Iterator[Phrase]:
    """The phrases whose presence counts towards a match (not those after NOT)."""
    if isinstance(node, Phrase):
        yield node
    elif isinstance(node, Near):
        yield from node.phrases
    elif node.name == "NOT":
        yield from _positive(node.left)
    else:
        yield from _positive(node.left)
        yield from _positive(node.right)


class TextMatcher:
    """One parsed query, matched against the words of texts."""

    def __init__(self, query: str | Query) -> None:
        self.tree = parse_query(query) if isinstance(query, str) else query
        self.phrases = list(dict.fromkeys(_positive(self.tree)))  # distinct
        self._longest = max((len(phrase.words) for phrase in self.phrases), default=1)

    def _holds(self, node: Any, words: Words) -> bool:
        if isinstance(node, Phrase):
            return bool(words.find(node))
        if isinstance(node, Near):
            return all(words.find(phrase) for phrase in node.phrases)
        if node.name == "AND":
            return self._holds(node.left, words) and self._holds(node.right, words)
        if node.name == "OR":
            return self._holds(node.left, words) or self._holds(node.right, words)
        return self._holds(node.left, words) and not self._holds(node.right, words)

    def matches(self, words: list[str]) -> bool:
        return self._holds(self.tree, Words(words))

    def score(self, words: list[str], rarity: dict[Phrase, float]) -> float:
        """Stand-in for BM25: occurrences of each phrase, damped, times its rarity, over length."""
        total, joined = 0.0, Words(words)
        for phrase in self.phrases:
            count = len(joined.find(phrase))
            if count:
                total += rarity.get(phrase, 1.0) * count / (count + 1.2)
        return total / (1 + len(words) / 1000)

    def rarity(self, documents: list[list[str]]) -> dict[Phrase, float]:
        """An idf per phrase over the candidate documents."""
        n = len(documents)
        having = dict.fromkeys(self.phrases, 0)
        for words in documents:
            joined = Words(words)
            for phrase in self.phrases:
                having[phrase] += bool(joined.find(phrase))
        return {phrase: math.log(1 + (n - count + 0.5) / (count + 0.5)) for phrase, count in having.items()}

    def snippet(self, text: str) -> str:
        """store/search.py's snippet of ``text`` at the passage where most distinct phrases of the
        query stand within a snippet's width (the first such), their words marked."""
        joined = Words(tokens(text))
        found = sorted((start, number) for number, phrase in enumerate(self.phrases) for start in joined.find(phrase))
        if not found:
            return snippet(text, set(), count=joined.count)
        first = _best_passage(found, SNIPPET_TOKENS - SNIPPET_TOKENS // 4)
        # The marks a snippet around `first` may show: phrases that start up to a phrase's length before it.
        low, high = first - SNIPPET_TOKENS - self._longest, first + SNIPPET_TOKENS
        marked: set[int] = set()
        for start, number in found[bisect_left(found, (low, -1)) :]:
            if start >= high:
                break
            marked.update(range(start, start + len(self.phrases[number].words)))
        return snippet(text, marked, first, joined.count)


def _best_passage(found: list[tuple[int, int]], width: int) -> int:
    """The first position of the window of ``width`` words holding the most distinct phrases,
    over the (position, phrase) pairs in ``found`` (sorted): one pass, a window sliding over it."""
    counts: dict[int, int] = {}
    best, best_start, low = 0, found[0][0], 0
    for start, number in found:
        counts[number] = counts.get(number, 0) + 1
        while found[low][0] <= start - width:
            gone = found[low][1]
            counts[gone] -= 1
            if not counts[gone]:
                del counts[gone]
            low += 1
        if len(counts) > best:
            best, best_start = len(counts), found[low][0]
    return best_start
