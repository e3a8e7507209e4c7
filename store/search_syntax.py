"""The query language of a search: what toka reads as a query, for every backend.

Every backend reads a query with :func:`parse_query` (a subset of FTS5's grammar), bounded in
size (store/search.py, ``MAX_QUERY_CHARS`` and ``MAX_QUERY_WORDS``) and with the operands an AND
or an OR repeats kept once (:func:`simplified`): SQLite is handed the query written back in FTS5
syntax (:func:`fts5_query`), PostgreSQL as a ``tsquery``, and the memory backend matches it with
store/search_match.py, which also makes every backend's snippets. :func:`literal_query` writes
text as people type it (a path, a file name, a hyphenated name) in that syntax, so that it is
searched for as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from store.errors import UsageError
from store.search import MAX_QUERY_WORDS, check_query_size, tokens, too_many_words


def literal_query(text: str) -> str:
    """A query, in FTS5 syntax, for ``text`` as written: each whitespace-separated term is a
    quoted phrase of its tokens, and every term must be found. A path, a file name or a
    hyphenated name (``src/auth/client.py``, ``tmux-waiting.sh``) is found where its words stand
    together; what the syntax would read as operators (``OR``, ``-``, ``*``, quotes, parentheses)
    is text like the rest. A term written twice is searched for once. UsageError when no term
    holds a letter or a digit, or the query is over its bounds (store/search.py)."""
    check_query_size(text)
    terms = text.split()
    words = sum(len(tokens(term)) for term in terms)
    if words > MAX_QUERY_WORDS:
        raise too_many_words(words)
    kept = list(dict.fromkeys(term for term in terms if tokens(term)))
    if not kept:
        raise UsageError(
            f"nothing to search for in {text!r}: only letters and digits are indexed",
            "give a word, a name or a path, e.g. `toka search tmux-waiting.sh`",
        )
    return " ".join('"' + term.replace('"', '""') + '"' for term in kept)


# --- The query language, as the memory and PostgreSQL backends read it -----------------------
#
# A subset of FTS5's grammar: words and "quoted phrases" (a word that cuts into several tokens
# is a phrase, as in FTS5), a trailing * for a prefix, AND (or nothing), OR, NOT, parentheses,
# and NEAR(phrases, distance). Column filters (col:word), ^ and + are refused.

# Parentheses deeper than this are refused (the parser recurses into each).
MAX_NESTING = 16
_LEX = re.compile(
    r'\s*(?:(?P<quoted>"(?:[^"]|"")*")|(?P<open>\()|(?P<close>\))|(?P<star>\*)|(?P<comma>,)|(?P<word>[^\s()"*,]+))'
)


@dataclass(frozen=True, slots=True)
class Phrase:
    """Words that must stand next to each other, in order; the last one a prefix when ``prefix``.
    ``text``: the phrase as written, which FTS5 cuts into words itself (its tokenizer and
    store/search.py's ``tokens`` differ on a few characters, such as combining accents)."""

    words: tuple[str, ...]
    prefix: bool
    text: str = ""


@dataclass(frozen=True, slots=True)
class Near:
    """Phrases within ``distance`` words of each other (FTS5's default: 10). SQLite reads it so;
    the memory and PostgreSQL backends read it as AND of the phrases."""

    phrases: tuple[Phrase, ...]
    distance: int | None


@dataclass(frozen=True, slots=True)
class Op:
    """Two parsed queries joined by AND, OR or NOT (``left`` but not ``right``)."""

    name: str  # AND, OR, NOT
    left: Any
    right: Any


def _malformed(query: str, detail: str) -> UsageError:
    shown = query if len(query) <= 80 else query[:79] + "…"
    return UsageError(
        f"cannot read the search query {shown!r}: {detail}",
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
        self.words = 0  # in the phrases read so far
        self.depth = 0  # of parentheses open

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
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise _malformed(self.query, f"parentheses are nested more than {MAX_NESTING} deep")
            node = self.or_expr()
            if self.take()[0] != "close":
                raise _malformed(self.query, "a parenthesis is not closed")
            self.depth -= 1
            return node
        if kind == "word" and value in ("AND", "OR", "NOT"):
            raise _malformed(self.query, f"{value} needs a term on each side")
        if kind == "word" and value == "NEAR" and self.peek() == ("open", "("):
            return self.near()
        if kind == "star":
            raise _malformed(self.query, "a * must follow a word: it makes the word a prefix (`migrat*`)")
        if kind == "quoted":
            value = value[1:-1].replace('""', '"')
            words = tuple(tokens(value))
        elif kind == "word":
            if ":" in value or value.startswith("^") or not re.fullmatch(r"[\w\x80-\U0010ffff]+", value):
                raise _malformed(self.query, f"{value!r} is not a plain word")
            words = tuple(tokens(value))
        else:
            raise _malformed(self.query, f"unexpected {value!r}")
        prefix = self.peek() == ("star", "*")
        if prefix:
            self.at += 1
        self.words += len(words)
        if self.words > MAX_QUERY_WORDS:
            raise too_many_words(sum(len(tokens(value)) for kind, value in self.items if kind in ("word", "quoted")))
        return Phrase(words, prefix, value)

    def near(self) -> Near:
        self.at += 1  # the "("
        phrases: list[Phrase] = []
        distance = None
        while True:
            item = self.take()
            if item[0] == "close":
                break
            if item[0] == "comma" and phrases and distance is None:
                kind, value = self.take()
                if kind != "word" or not value.isdigit() or self.peek() != ("close", ")"):
                    raise _malformed(self.query, "NEAR's distance is a number after the last phrase: NEAR(a b, 5)")
                distance = int(value)
                continue
            self.at -= 1
            phrase = self.primary()
            if not isinstance(phrase, Phrase):
                raise _malformed(self.query, "NEAR() holds words and phrases only")
            phrases.append(phrase)
        if not phrases:
            raise _malformed(self.query, "NEAR() is empty")
        return Near(tuple(phrases), distance)


Query = Phrase | Near | Op


def parse_query(query: str) -> Query:
    """``query`` as a tree of :class:`Op`, :class:`Near` and :class:`Phrase`, simplified; UsageError
    with a hint when it is not valid syntax or over its bounds (store/search.py)."""
    check_query_size(query)
    tree: Query = simplified(_Parser(query).parse())
    return tree


def _operands(node: Any, name: str) -> list[Any]:
    """The operands of a chain of ``name`` (AND or OR), left to right."""
    if isinstance(node, Op) and node.name == name:
        return _operands(node.left, name) + _operands(node.right, name)
    return [node]


def simplified(node: Any) -> Any:
    """``node`` with each operand an AND, an OR or a NEAR repeats kept once: ``a a a`` is ``a``, which
    every backend then costs as one phrase (FTS5 matches and ranks in time that grows with the
    square of the phrases a word matches)."""
    if isinstance(node, Near):  # a phrase named twice is found at the same places: once will do
        return Near(tuple(dict.fromkeys(node.phrases)), node.distance)
    if not isinstance(node, Op):
        return node
    if node.name == "NOT":
        return Op("NOT", simplified(node.left), simplified(node.right))
    operands = list(dict.fromkeys(simplified(operand) for operand in _operands(node, node.name)))
    tree = operands[0]
    for operand in operands[1:]:
        tree = Op(node.name, tree, operand)
    return tree


def _fts5_phrase(phrase: Phrase) -> str:
    return '"' + phrase.text.replace('"', '""') + '"' + ("*" if phrase.prefix else "")


def fts5_query(node: Query) -> str:
    """A parsed query written back in FTS5 syntax, for the SQLite backend."""
    if isinstance(node, Phrase):
        return _fts5_phrase(node)
    if isinstance(node, Near):
        distance = "" if node.distance is None else f", {node.distance}"
        return "NEAR(" + " ".join(map(_fts5_phrase, node.phrases)) + distance + ")"
    return f"({fts5_query(node.left)} {node.name} {fts5_query(node.right)})"
