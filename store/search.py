"""Full-text search over the log: what text an event contributes, and the shape of a search.

Every backend indexes the same text, chosen here by :func:`indexed_text` from an event's kind
and payload: the words of messages, thinking, tool inputs and outputs, notes, memory values,
compression and compaction summaries and handoff documents. Usage figures, lifecycle changes
and raw records are left out: they hold numbers and ids, which a search for words only drowns
in. The text of one event is cut at :data:`MAX_INDEXED_CHARS`; a tool that printed a megabyte
is still found by its first pages, and the index stays a fraction of the log.

The SQLite backend answers with FTS5 (query syntax, BM25 ranking, ``snippet()``); the memory
backend answers the same queries with :class:`TextMatcher`, a small matcher of the same
syntax over the same tokens, whose score is a stand-in (matched terms counted, weighted by
how rare they are among the candidates), not BM25: the hits agree, their order may not.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from store.errors import UsageError

# The text of one event is cut to this many characters (32 KiB of ASCII): enough for every
# message and most tool outputs whole, bounded for the rare megabyte of build log.
MAX_INDEXED_CHARS = 32 * 1024
# What a snippet wraps each matched token in: characters that code and logs rarely hold,
# unlike [ ] or * (the CLI turns them into bold on a terminal).
MARK_START, MARK_END = "«", "»"
ELLIPSIS = "…"
# How many tokens a snippet shows around the best match (FTS5's snippet() takes 1 to 64).
SNIPPET_TOKENS = 16
DEFAULT_LIMIT = 20
MAX_LIMIT = 200


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """A search: ``text`` in FTS5 query syntax, narrowed like an :class:`EventQuery`.

    Times are UTC microseconds, ``since`` inclusive, ``until`` not; ``kinds`` are exact kinds or
    a family written as ``"tool.*"``.
    """

    text: str
    session: str | None = None
    agent: str | None = None
    kinds: tuple[str, ...] = ()
    since: int | None = None
    until: int | None = None
    limit: int = DEFAULT_LIMIT

    def checked(self) -> SearchQuery:
        """Itself, once the text and limit are fit to run (UsageError otherwise)."""
        if not self.text.strip():
            raise UsageError("the search query is empty", "give one or more words, e.g. `toka search timeout`")
        if not 1 <= self.limit <= MAX_LIMIT:
            raise UsageError(f"limit must be between 1 and {MAX_LIMIT}, got {self.limit}")
        return self


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One matching event. ``score``: higher is better (SQLite: BM25 negated, as FTS5's
    ``bm25()`` is lower for better matches). ``snippet``: the best passage with each matched
    token between MARK_START and MARK_END."""

    seq: int
    id: str
    session: str
    agent: str | None
    kind: str
    ts: int
    digest: str
    score: float
    snippet: str


def _strings(value: Any, into: list[str], budget: int) -> int:
    """Append the strings inside a JSON value (dict values in order, list items) until
    ``budget`` characters are collected; returns what is left of the budget."""
    if budget <= 0:
        return budget
    if isinstance(value, str):
        if value:
            into.append(value)
            budget -= len(value) + 1
    elif isinstance(value, dict):
        for item in value.values():
            budget = _strings(item, into, budget)
    elif isinstance(value, list):
        for item in value:
            budget = _strings(item, into, budget)
    return budget


def _text_of(*values: Any) -> str | None:
    parts: list[str] = []
    budget = MAX_INDEXED_CHARS
    for value in values:
        budget = _strings(value, parts, budget)
    text = "\n".join(parts)[:MAX_INDEXED_CHARS]
    return text if text.strip() else None


def indexed_text(kind: str, payload: dict[str, Any]) -> str | None:
    """The text an event adds to the search index, or None when it adds nothing.

    A pure function of the kind and payload, so an index rebuilt from the log is the same index.
    """
    get = payload.get
    if kind in ("message", "thinking"):
        return _text_of(get("text"))
    if kind == "tool.call":
        return _text_of(get("tool"), get("input"))
    if kind == "tool.result":
        return _text_of(get("output"))
    if kind.startswith("note."):
        return _text_of(get("text"), get("reason"))
    if kind == "memory.set":
        return _text_of(get("key"), get("value"))
    if kind in ("compression", "compaction"):
        return _text_of(get("summary"))
    if kind == "handoff":
        return _text_of(get("markdown") or get("prompt"))
    if kind == "session.title":
        return _text_of(get("title"))
    return None


# Tokens as FTS5's unicode61 tokenizer cuts them: runs of letters and digits; anything else
# (underscore included) separates. Folded to lower case; diacritics are kept, so the two
# backends may differ on "café" against "cafe".
WORD = re.compile(r"[^\W_]+")


def tokens(text: str) -> list[str]:
    return WORD.findall(text.lower())


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


def snippet(text: str, marked_positions: set[int]) -> str:
    """Up to SNIPPET_TOKENS tokens of ``text`` around its first marked token, with the marked
    tokens wrapped and an ellipsis where the text goes on: FTS5's snippet(), approximately."""
    spans = [m.span() for m in WORD.finditer(text)]
    if not spans:
        return text[:200]
    first = min(marked_positions) if marked_positions else 0
    start = max(0, min(first - SNIPPET_TOKENS // 4, len(spans) - SNIPPET_TOKENS))
    end = min(len(spans), start + SNIPPET_TOKENS)
    out = [ELLIPSIS] if start > 0 else []
    cursor = spans[start][0]
    for index in range(start, end):
        begin, stop = spans[index]
        marked = index in marked_positions
        # Neighbouring marked tokens share one pair of marks, as in FTS5: «login timeout».
        opens = marked and (index == start or index - 1 not in marked_positions)
        closes = marked and (index == end - 1 or index + 1 not in marked_positions)
        out.append(text[cursor:begin] + (MARK_START if opens else "") + text[begin:stop] + (MARK_END if closes else ""))
        cursor = stop
    if end < len(spans):
        out.append(ELLIPSIS)
    else:
        out.append(text[cursor:])
    return "".join(out)
