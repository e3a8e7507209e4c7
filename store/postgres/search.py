"""Full-text search in the PostgreSQL backend: a ``tsvector`` per event under a GIN index.

The hits must be those of the SQLite backend, so PostgreSQL's own text parser (which keeps
``login-timeout`` whole, finds e-mail addresses and paths, stems with a dictionary) is not used:
an event's words are cut by store/search.py's ``tokens``, the cut FTS5's unicode61 tokenizer
makes, and stored as a ``tsvector`` literal with their positions. A query is read by the same
parser as the memory backend's (``parse_query``) and written as a ``tsquery`` over the same
words: a phrase is ``'a' <-> 'b'``, a prefix ``'migrat':*``, NOT is ``& !``. Ranking is
``ts_rank``, not BM25: the order of the hits may differ from SQLite's, the hits do not.

Snippets are made in Python by the memory backend's ``snippet`` for the rows that are left once
the search is ranked and limited, never for every match.

Limits PostgreSQL puts on a ``tsvector``: positions up to 16,383, at most 256 of one word, and
no word longer than 2,047 bytes. A text that passes one (a long build log, a word repeated
hundreds of times) gets a tsvector without what does not fit, marked :data:`PARTIAL`; a search
matches such a tsvector by a widened query (each phrase only its words) and then checks the
event's text itself with the memory backend's matcher, so the hits stay SQLite's.
"""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

from store.base import CHUNK
from store.errors import StoreError
from store.events import Event
from store.postgres.reads import HOLD_APPENDS, fetch_rows
from store.query import narrowing_terms
from store.rows import SELECT, event_of
from store.search import WORD, SearchHit, SearchQuery, indexed_text, tokens
from store.search_match import TextMatcher
from store.search_syntax import Near, Phrase, Query, parse_query

MAX_POSITION = 16383
MAX_POSITIONS = 256  # of one word: a tsvector keeps the first 256
MAX_WORD_BYTES = 2047
# A word no tsvector holds (tokens never contain "_"): what a phrase of no words stands for.
NOTHING = "'_'"
# The word that marks a tsvector which does not tell every phrase its text holds: one of its words
# stands at more positions than are kept, or past MAX_POSITION, or is too long to store. A search
# reads the text of such an event again (see search_sql).
PARTIAL = "_partial"


def _fits(word: str) -> bool:
    return len(word.encode()) <= MAX_WORD_BYTES


def words_literal(text: str) -> str:
    """The ``tsvector`` literal of ``text``: each word with the positions it stands at (those a
    tsvector keeps), and :data:`PARTIAL` when some could not be kept."""
    positions: dict[str, list[int]] = {}
    partial = False
    for position, word in enumerate(WORD.findall(text.lower()), 1):
        kept = positions.get(word)
        if kept is None:
            if not _fits(word):
                partial = True
                continue
            kept = positions[word] = []
        if position > MAX_POSITION or len(kept) == MAX_POSITIONS:
            partial = True  # the word is kept, without this position
        else:
            kept.append(position)
    literal = " ".join([f"'{word}'" + (":" + ",".join(map(str, at)) if at else "") for word, at in positions.items()])
    return f"{literal} '{PARTIAL}'".lstrip() if partial else literal


def index_rows(events: list[Event]) -> list[tuple[int, str, str]]:
    """(seq, indexed text, its tsvector literal) for each event that adds text to the index."""
    rows = []
    for event in events:
        text = indexed_text(event.kind, event.payload)
        if text is not None:
            rows.append((event.seq, text, words_literal(text)))
    return rows


def _phrase(node: Phrase, wide: bool) -> str:
    kept = [f"'{word}'" for word in node.words if _fits(word)]
    if not node.words:
        return NOTHING
    if len(kept) < len(node.words):
        if not wide:
            return NOTHING  # no tsvector holds the word
        if not kept:
            return f"'{PARTIAL}'"
    if node.prefix and _fits(node.words[-1]):
        kept[-1] += ":*"
    return kept[0] if len(kept) == 1 else "(" + (" & " if wide else " <-> ").join(kept) + ")"


def tsquery(node: Query, widen: bool | None = None) -> str:
    """A parsed query (store/search.py) as ``tsquery`` text over the same words.

    ``widen`` is for a :data:`PARTIAL` tsvector, which may lack positions and words of its text:
    True gives a query that matches at least every text the query matches (a phrase becomes its
    words wherever they stand; a word too long to store, any partial tsvector), False one that
    matches at most those (a phrase as it is, which a missing position can only fail); under NOT
    the one turns into the other. None: the query as it is, for a tsvector that holds everything."""
    if isinstance(node, Phrase):
        return _phrase(node, widen is True)
    if isinstance(node, Near):  # read as AND of its phrases
        return "(" + " & ".join(_phrase(phrase, widen is True) for phrase in node.phrases) + ")"
    left = tsquery(node.left, widen)
    if node.name == "AND":
        return f"({left} & {tsquery(node.right, widen)})"
    if node.name == "OR":
        return f"({left} | {tsquery(node.right, widen)})"
    return f"({left} & !{tsquery(node.right, None if widen is None else not widen)})"


def search_sql(query: SearchQuery, offset: int = 0) -> tuple[str, list[Any]]:
    """The statement of a search (placeholders in psycopg's style), narrowed like the SQLite one,
    for the ``query.limit`` best rows after ``offset``; the query text is checked first
    (UsageError when it is not valid syntax).

    It matches a :data:`PARTIAL` tsvector by the widened query too: :func:`hits` then reads the
    event's text to decide."""
    tree = parse_query(query.text)
    words = f"{tsquery(tree)} | ('{PARTIAL}' & {tsquery(tree, widen=True)})"
    filters, params = narrowing_terms(query)
    ranked = (
        "SELECT e.seq, e.id, e.session, e.agent, e.kind, e.ts, e.digest, ts_rank(t.words, q.q) AS score,"
        " t.words @@ ?::tsquery AS partial"
        " FROM search_text t JOIN events e ON e.seq = t.seq, (SELECT ?::tsquery AS q) q"
        " WHERE t.words @@ q.q" + filters + " ORDER BY score DESC, e.seq DESC LIMIT ? OFFSET ?"
    )
    sql = f"SELECT r.*, t.text FROM ({ranked}) r JOIN search_text t ON t.seq = r.seq ORDER BY r.score DESC, r.seq DESC"
    return sql.replace("?", "%s"), [f"'{PARTIAL}'", words, *params, query.limit, offset]


def hits(query: SearchQuery, rows: list[Any]) -> list[SearchHit]:
    """The rows of :func:`search_sql` that match, each with its snippet: all of them but those of a
    partial tsvector whose text does not hold what the query asks for."""
    matcher = TextMatcher(query.text)
    found = []
    for seq, event_id, session, agent, kind, ts, event_digest, score, partial, text in rows:
        if partial and not matcher.matches(tokens(text)):
            continue
        shown = matcher.snippet(text)
        found.append(SearchHit(seq, event_id, session, agent, kind, ts, event_digest, float(score), shown))
    return found


async def rebuild_search_index(conn: AsyncConnection) -> int:
    """Index the text of every event afresh, in one transaction; the number of events with text."""
    async with conn.transaction():
        await conn.execute(HOLD_APPENDS)
        await conn.execute("DELETE FROM search_text")
        after = count = 0
        while rows := await fetch_rows(conn, SELECT + " WHERE e.seq > ? ORDER BY e.seq LIMIT ?", (after, CHUNK)):
            events = []
            for row in rows:
                try:
                    events.append(event_of(row))
                except StoreError:
                    continue  # a damaged payload is for `toka verify` to report, not for search
            texts = index_rows(events)
            if texts:
                async with conn.cursor() as cursor:
                    await cursor.executemany("INSERT INTO search_text VALUES (%s, %s, %s::tsvector)", texts)
            count += len(texts)
            after = rows[-1][0]
    return count
