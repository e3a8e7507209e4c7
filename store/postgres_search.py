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

Limits PostgreSQL puts on a ``tsvector``: a position past 16,383 counts as 16,383 (so a phrase
in the last part of a very long text may be missed; the text is cut at 32 KiB of characters
anyway), and a word longer than 2,047 bytes cannot be stored (such words are left out: no one
searches for them).
"""

from __future__ import annotations

from typing import Any

from store.base import EventQuery
from store.events import Event
from store.query import where_clause
from store.search import (
    WORD,
    Op,
    Phrase,
    SearchHit,
    SearchQuery,
    TextMatcher,
    indexed_text,
    parse_query,
    snippet,
    tokens,
)

MAX_POSITIONS = 256
MAX_WORD_BYTES = 2047
# A word no tsvector holds (tokens never contain "_"): what a phrase of no words stands for.
NOTHING = "'_'"


def words_literal(text: str) -> str:
    """The ``tsvector`` literal of ``text``: each word with the positions it stands at (PostgreSQL
    keeps 256 per word, and reads a position past 16,383 as 16,383)."""
    positions: dict[str, list[int]] = {}
    for position, word in enumerate(WORD.findall(text.lower()), 1):
        found = positions.get(word)
        if found is None:
            if len(word) * 4 > MAX_WORD_BYTES and len(word.encode()) > MAX_WORD_BYTES:
                continue
            positions[word] = [position]
        elif len(found) < MAX_POSITIONS:
            found.append(position)
    return " ".join([f"'{word}':{','.join(map(str, found))}" for word, found in positions.items()])


def index_rows(events: list[Event]) -> list[tuple[int, str, str]]:
    """(seq, indexed text, its tsvector literal) for each event that adds text to the index."""
    rows = []
    for event in events:
        text = indexed_text(event.kind, event.payload)
        if text is not None:
            rows.append((event.seq, text, words_literal(text)))
    return rows


def tsquery(node: Phrase | Op) -> str:
    """A parsed query (store/search.py) as ``tsquery`` text over the same words."""
    if isinstance(node, Phrase):
        if not node.words:
            return NOTHING
        quoted = [f"'{word}'" for word in node.words]
        if node.prefix:
            quoted[-1] += ":*"
        return quoted[0] if len(quoted) == 1 else "(" + " <-> ".join(quoted) + ")"
    left, right = tsquery(node.left), tsquery(node.right)
    if node.name == "AND":
        return f"({left} & {right})"
    if node.name == "OR":
        return f"({left} | {right})"
    return f"({left} & !{right})"


def search_sql(query: SearchQuery) -> tuple[str, list[Any]]:
    """The statement of a search (placeholders in psycopg's style), narrowed like the SQLite one;
    the query text is checked first (UsageError when it is not valid syntax)."""
    words = tsquery(parse_query(query.text))
    narrowing = EventQuery(session=query.session, kinds=query.kinds, since=query.since, until=query.until)
    sql, params = where_clause(narrowing)
    filters = sql.split(" ORDER BY")[0].replace(" WHERE ", " AND ", 1)
    if query.agent is not None:
        filters += " AND e.agent = ?"
        params.append(query.agent)
    ranked = (
        "SELECT e.seq, e.id, e.session, e.agent, e.kind, e.ts, e.digest, ts_rank(t.words, q.q) AS score"
        " FROM search_text t JOIN events e ON e.seq = t.seq, (SELECT ?::tsquery AS q) q"
        " WHERE t.words @@ q.q" + filters + " ORDER BY score DESC, e.seq DESC LIMIT ?"
    )
    sql = f"SELECT r.*, t.text FROM ({ranked}) r JOIN search_text t ON t.seq = r.seq ORDER BY r.score DESC, r.seq DESC"
    return sql.replace("?", "%s"), [words, *params, query.limit]


def hits(query: SearchQuery, rows: list[Any]) -> list[SearchHit]:
    """The rows of :func:`search_sql` as hits, each with its snippet."""
    matcher = TextMatcher(query.text)
    found = []
    for seq, event_id, session, agent, kind, ts, event_digest, score, text in rows:
        marked = matcher.marked(tokens(text))
        found.append(
            SearchHit(seq, event_id, session, agent, kind, ts, event_digest, float(score), snippet(text, marked))
        )
    return found
