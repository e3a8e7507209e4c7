"""Full-text search over the log: what text an event contributes, and the shape of a search.

Every backend indexes the same text, chosen here by :func:`indexed_text` from an event's kind
and payload: the words of messages, thinking, tool inputs and outputs, notes, memory values,
compression and compaction summaries and handoff documents. Usage figures, lifecycle changes
and raw records are left out: they hold numbers and ids, which a search for words only drowns
in. The text of one event is cut at :data:`MAX_INDEXED_CHARS`; a tool that printed a megabyte
is still found by its first pages, and the index stays a fraction of the log.

The SQLite backend answers with FTS5 (query syntax, BM25 ranking, ``snippet()``); the memory
backend answers the same queries with ``TextMatcher`` (store/search_syntax.py, the query
language), a small matcher of the same syntax over the same tokens, whose score is a stand-in
(matched terms counted, weighted by how rare they are among the candidates), not BM25: the
hits agree, their order may not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import islice
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
# How large a query may be: its characters, and the words (runs of letters and digits) of all its
# terms together (`src/auth/client.py` is four). Beyond, it is refused before it is read: a search
# costs time in the number of its words times the matches in each event.
MAX_QUERY_CHARS = 4096
MAX_QUERY_WORDS = 64


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """A search: ``text`` in FTS5 query syntax, narrowed like an :class:`EventQuery`.
    (``literal_query`` of store/search_syntax.py writes text as people type it in that syntax,
    as ``toka search`` does unless asked for the syntax.)

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
        check_query_size(self.text)
        if not 1 <= self.limit <= MAX_LIMIT:
            raise UsageError(f"limit must be between 1 and {MAX_LIMIT}, got {self.limit}")
        return self


def check_query_size(text: str) -> None:
    """UsageError when ``text`` is empty or longer than :data:`MAX_QUERY_CHARS`."""
    if len(text) > MAX_QUERY_CHARS:
        raise UsageError(
            f"the search query is {len(text):,} characters long; at most {MAX_QUERY_CHARS:,} are read",
            f"search for a few distinctive words (at most {MAX_QUERY_WORDS}), not a whole text",
        )
    if not text.strip():
        raise UsageError("the search query is empty", "give one or more words, e.g. `toka search timeout`")


def too_many_words(count: int) -> UsageError:
    return UsageError(
        f"the search query has {count:,} words; at most {MAX_QUERY_WORDS} are read",
        "search for a few distinctive words; a word is a run of letters and digits (`src/auth/client.py` is four)",
    )


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
    if kind in ("compression", "compaction", "compaction.summary"):
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


def snippet(text: str, marked_positions: set[int], first: int | None = None, count: int | None = None) -> str:
    """Up to SNIPPET_TOKENS tokens of ``text`` around the marked token at position ``first`` (by
    default the first marked token), with the marked tokens wrapped and an ellipsis where the text
    goes on. ``count``: the text's tokens, when the caller knows it."""
    if count is None:
        count = len(WORD.findall(text))
    if first is None:
        first = min(marked_positions) if marked_positions else 0
    start = max(0, min(first - SNIPPET_TOKENS // 4, count - SNIPPET_TOKENS))
    spans = [match.span() for match in islice(WORD.finditer(text), start, start + SNIPPET_TOKENS)]
    if not spans:
        return text[:200]
    end = start + len(spans)
    out = [ELLIPSIS] if start > 0 else []
    cursor = spans[0][0]
    for index, (begin, stop) in enumerate(spans, start):
        marked = index in marked_positions
        # Neighbouring marked tokens share one pair of marks, as in FTS5: «login timeout».
        opens = marked and (index == start or index - 1 not in marked_positions)
        closes = marked and (index == end - 1 or index + 1 not in marked_positions)
        out.append(text[cursor:begin] + (MARK_START if opens else "") + text[begin:stop] + (MARK_END if closes else ""))
        cursor = stop
    if end < count:
        out.append(ELLIPSIS)
    else:
        out.append(text[cursor:])
    return "".join(out)
