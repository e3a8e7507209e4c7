"""Full-text search in the SQLite backend: an FTS5 index over the text of the events.

What text of an event is indexed is store/search.py's ``indexed_text``. The text is kept in
``search_text``, the external content table of the FTS5 index ``search_index`` (rowid = the
event's seq); an append indexes its batch in its own transaction, so an event is searchable
exactly when it is committed. FTS5 finds and ranks (bm25); the event's own columns narrow the hits
down. The query is read by store/search_syntax.py and handed to FTS5 written back in its syntax,
each repeated operand once; the snippets are store/search_match.py's, made for the rows returned
only: FTS5's own snippet() takes time in the square of the matches in the text.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from store.base import CHUNK
from store.errors import StoreError
from store.events import Event
from store.query import narrowing_terms
from store.rows import SELECT_INLINE, event_of, transaction
from store.search import SearchHit, SearchQuery, indexed_text
from store.search_match import TextMatcher
from store.search_syntax import fts5_query


def index_events(db: sqlite3.Connection, events: list[Event]) -> None:
    """Add the batch's text to the search index, inside the append's transaction."""
    texts = []
    for event in events:
        text = indexed_text(event.kind, event.payload)
        if text is not None:
            texts.append((event.seq, text))
    if texts:
        db.executemany("INSERT INTO search_text VALUES (?, ?)", texts)
        db.executemany("INSERT INTO search_index (rowid, text) VALUES (?, ?)", texts)


def rebuild_search_index(db: sqlite3.Connection) -> int:
    """Index the text of every event afresh; the number of events with text."""
    with transaction(db):
        db.execute("DELETE FROM search_text")
        rows = db.execute(SELECT_INLINE + " ORDER BY e.seq")
        while batch := rows.fetchmany(CHUNK):
            texts = []
            for row in batch:
                try:
                    event = event_of(row)
                except StoreError:
                    continue  # a damaged payload is for `toka verify` to report, not for search
                text = indexed_text(event.kind, event.payload)
                if text is not None:
                    texts.append((event.seq, text))
            db.executemany("INSERT INTO search_text VALUES (?, ?)", texts)
        # FTS5 reads its external content table afresh: the index then holds exactly search_text.
        db.execute("INSERT INTO search_index (search_index) VALUES ('rebuild')")
        count: int = db.execute("SELECT count(*) FROM search_text").fetchone()[0]
    return count


SEARCH_SELECT = (
    # rank is the bm25() FTS5 sorts by, negated so that a higher score is a better match.
    "SELECT e.seq, e.id, e.session, e.agent, e.kind, e.ts, e.digest, -search_index.rank,"
    " (SELECT text FROM search_text WHERE seq = e.seq)"
    " FROM search_index JOIN events e ON e.seq = search_index.rowid WHERE search_index MATCH ?"
)


def search_sql(query: SearchQuery) -> tuple[str, list[Any], TextMatcher]:
    """The statement of a search: FTS5 finds and ranks; the event's columns narrow it down. With
    it, the matcher that makes the hits' snippets. UsageError when the query cannot be read."""
    matcher = TextMatcher(query.text)
    filters, params = narrowing_terms(query)
    # ORDER BY rank is sorted inside FTS5, so SQLite reads the text of the rows it returns only.
    sql = SEARCH_SELECT + filters + " ORDER BY search_index.rank LIMIT ?"
    return sql, [fts5_query(matcher.tree), *params, query.limit], matcher


def run_search(db: sqlite3.Connection, sql: str, params: list[Any], matcher: TextMatcher) -> list[SearchHit]:
    """The hits of the statement :func:`search_sql` made, each with its snippet."""
    return [
        SearchHit(seq, event_id, session, agent, kind, ts, digest, score, matcher.snippet(text))
        for seq, event_id, session, agent, kind, ts, digest, score, text in db.execute(sql, params)
    ]
