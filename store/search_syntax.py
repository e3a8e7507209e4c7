"""The query language of a search: what toka reads as a query, for every backend.

FTS5 reads its own syntax in the SQLite backend; the memory and PostgreSQL backends read the
same syntax with :func:`parse_query` (a subset of FTS5's grammar) and match it with
:class:`TextMatcher` over the tokens of store/search.py. :func:`literal_query` writes text as
people type it (a path, a file name, a hyphenated name) in that syntax, so that it is searched
for as written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from store.errors import UsageError
from store.search import tokens


def literal_query(text: str) -> str:
    """A query, in FTS5 syntax, for ``text`` as written: each whitespace-separated term is a
    quoted phrase of its tokens, and every term must be found. A path, a file name or a
    hyphenated name (``src/auth/client.py``, ``tmux-waiting.sh``) is found where its words stand
    together; what the syntax would read as operators (``OR``, ``-``, ``*``, quotes, parentheses)
    is text like the rest. UsageError when no term holds a letter or a digit."""
    if not text.strip():
        raise UsageError("the search query is empty", "give one or more words, e.g. `toka search timeout`")
    terms = [term for term in text.split() if tokens(term)]
    if not terms:
        raise UsageError(
            f"nothing to search for in {text!r}: only letters and digits are indexed",
            "give a word, a name or a path, e.g. `toka search tmux-waiting.sh`",
        )
    return " ".join('"' + term.replace('"', '""') + '"' for term in terms)


# --- The query language, as the memory and PostgreSQL backends read it -----------------------
#
# A subset of FTS5's grammar: words and "quoted phrases" (a word that cuts into several tokens
# is a phrase, as in FTS5), a trailing * for a prefix, AND (or nothing), OR, NOT, parentheses,
# and NEAR(...) read as AND of its phrases. Column filters (col:word) and ^ are refused.

_LEX = re.compile(
    r'\s*(?:(?P<quoted>"(?:[^"]|"")*")|(?P<open>\()|(?P<close>\))|(?P<star>\*)|(?P<comma>,)|(?P<word>[^\s()"*,]+))'
)


@dataclass(frozen=True, slots=True)
class Phrase:
    """Words that must stand next to each other, in order; the last one a prefix when ``prefix``."""

    words: tuple[str, ...]
    prefix: bool


@dataclass(frozen=True, slots=True)
class Op:
    """Two parsed queries joined by AND, OR or NOT (``left`` but not ``right``)."""

    name: str  # AND, OR, NOT
    left: Any
    right: Any


def _malformed(query: str, detail: str) -> UsageError:
    return UsageError(
        f"cannot read the search query {query!r}: {detail}",
        'put words with punctuation in double quotes ("login-timeout"); operators are AND, OR, NOT,'
        " NEAR(), a trailing * for a prefix; see docs/search.md",
    )


class _Parser:
    def __init__(self, query: str) -> None:
        self.query = query
        self.items: list[tuple[str, str]] = []
        position = 0
        while position < len(query):
            match = _LEX.match(query, position)
            if match is None or match.end() == position:
                if query[position:].strip():
                    raise _malformed(query, f"unexpected {query[position:].strip()[:10]!r}")
                break
            position = match.end()
            kind = match.lastgroup
            if kind is not None:
                self.items.append((kind, match.group(kind)))
        self.at = 0

    def peek(self) -> tuple[str, str] | None:
        return self.items[self.at] if self.at < len(self.items) else None

    def take(self) -> tuple[str, str]:
        item = self.peek()
        if item is None:
            raise _malformed(self.query, "it ends too early")
        self.at += 1
        return item

    def parse(self) -> Any:
        """The query as a tree of :class:`Op` and :class:`Phrase`."""
        node = self.or_expr()
        if self.peek() is not None:
            raise _malformed(self.query, f"unexpected {self.peek()[1]!r}")  # type: ignore[index]
        return node

    def _is(self, word: str) -> bool:
        item = self.peek()
        return item is not None and item == ("word", word)

    def or_expr(self) -> Any:
        node = self.and_expr()
        while self._is("OR"):
            self.at += 1
            node = Op("OR", node, self.and_expr())
        return node

    def and_expr(self) -> Any:
        node = self.not_expr()
        while True:
            item = self.peek()
            if item is None or item[0] == "close" or self._is("OR"):
                return node
            if self._is("AND"):
                self.at += 1
            node = Op("AND", node, self.not_expr())

    def not_expr(self) -> Any:
        node = self.primary()
        while self._is("NOT"):
            self.at += 1
            node = Op("NOT", node, self.primary())
        return node

    def primary(self) -> Any:
        kind, value = self.take()
        if kind == "open":
            node = self.or_expr()
            if self.take()[0] != "close":
                raise _malformed(self.query, "a parenthesis is not closed")
            return node
        if kind == "word" and value in ("AND", "OR", "NOT"):
            raise _malformed(self.query, f"{value} needs a term on each side")
        if kind == "word" and value == "NEAR" and self.peek() == ("open", "("):
            return self.near()
        if kind == "quoted":
            words = tuple(tokens(value[1:-1].replace('""', '"')))
        elif kind == "word":
            if ":" in value or value.startswith("^") or not re.fullmatch(r"[\w\x80-\U0010ffff]+", value):
                raise _malformed(self.query, f"{value!r} is not a plain word")
            words = tuple(tokens(value))
        else:
            raise _malformed(self.query, f"unexpected {value!r}")
        prefix = self.peek() == ("star", "*")
        if prefix:
            self.at += 1
        return Phrase(words, prefix)

    def near(self) -> Any:
        self.at += 1  # the "("
        node: Any = None
        while True:
            item = self.take()
            if item[0] == "close":
                break
            if item[0] == "comma":
                self.take()  # the distance, NEAR(a b, 5): ignored here
                continue
            self.at -= 1
            phrase = self.primary()
            node = phrase if node is None else Op("AND", node, phrase)
        if node is None:
            raise _malformed(self.query, "NEAR() is empty")
        return node


def parse_query(query: str) -> Phrase | Op:
    """``query`` as a tree of :class:`Op` and :class:`Phrase`; UsageError with a hint when it is
    not valid syntax."""
    tree: Phrase | Op = _Parser(query).parse()
    return tree


def _phrase_at(words: list[str], phrase: Phrase) -> list[int]:
    """Positions where the phrase starts in ``words`` (its last word may be a prefix)."""
    size = len(phrase.words)
    if size == 0:
        return []
    found = []
    for start in range(len(words) - size + 1):
        ok = True
        for offset, word in enumerate(phrase.words):
            candidate = words[start + offset]
            last = offset == size - 1
            if not (candidate == word or (last and phrase.prefix and candidate.startswith(word))):
                ok = False
                break
        if ok:
            found.append(start)
    return found


class TextMatcher:
    """One parsed query, matched against the token lists of events (the memory backend)."""

    def __init__(self, query: str) -> None:
        self.tree = parse_query(query)
        self.phrases = list(self._positive(self.tree))

    def _positive(self, node: Any) -> Iterator[Phrase]:
        """The phrases whose presence counts towards a match (not those after NOT)."""
        if isinstance(node, Phrase):
            yield node
        elif node.name == "NOT":
            yield from self._positive(node.left)
        else:
            yield from self._positive(node.left)
            yield from self._positive(node.right)

    def _holds(self, node: Any, words: list[str]) -> bool:
        if isinstance(node, Phrase):
            return bool(_phrase_at(words, node))
        if node.name == "AND":
            return self._holds(node.left, words) and self._holds(node.right, words)
        if node.name == "OR":
            return self._holds(node.left, words) or self._holds(node.right, words)
        return self._holds(node.left, words) and not self._holds(node.right, words)

    def matches(self, words: list[str]) -> bool:
        return self._holds(self.tree, words)

    def marked(self, words: list[str]) -> set[int]:
        """Positions of the tokens that a snippet highlights."""
        marked: set[int] = set()
        for phrase in self.phrases:
            for start in _phrase_at(words, phrase):
                marked.update(range(start, start + len(phrase.words)))
        return marked

    def score(self, words: list[str], rarity: dict[Phrase, float]) -> float:
        """Stand-in for BM25: occurrences of each phrase, damped, times its rarity, over length."""
        total = 0.0
        for phrase in self.phrases:
            count = len(_phrase_at(words, phrase))
            if count:
                total += rarity.get(phrase, 1.0) * count / (count + 1.2)
        return total / (1 + len(words) / 1000)

    def rarity(self, documents: list[list[str]]) -> dict[Phrase, float]:
        """An idf per phrase over the candidate documents."""
        n = len(documents)
        result = {}
        for phrase in self.phrases:
            having = sum(1 for words in documents if _phrase_at(words, phrase))
            result[phrase] = math.log(1 + (n - having + 0.5) / (having + 0.5))
        return result
