"""Full-text search in the SQLite backend: an FTS5 index over the text of the events.

What text of an event is indexed is store/search.py's ``indexed_text``. The text is kept in
``search_text``, the external content table of the FTS5 index ``search_index`` (rowid = the
event's seq); an append indexes its batch in its own transaction, so an event is searchable
exactly when it is committed. FTS5 finds and ranks (bm25), and makes the snippets; the event's
own columns narrow the hits down.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from store.base import CHUNK
from store.errors import StoreError, UsageError
from store.events import Event
from store.query import narrowing_terms
from store.rows import SELECT, event_of, transaction
from store.search import ELLIPSIS, MARK_END, MARK_START, SNIPPET_TOKENS, SearchHit, SearchQuery, indexed_text


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
        rows = db.execute(SELECT + " ORDER BY e.seq")
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
    f" snippet(search_index, 0, '{MARK_START}', '{MARK_END}', '{ELLIPSIS}', {SNIPPET_TOKENS})"
    " FROM search_index JOIN events e ON e.seq = search_index.rowid WHERE search_index MATCH ?"
)


def search_sql(query: SearchQuery) -> tuple[str, list[Any]]:
    """The statement of a search: FTS5 finds and ranks; the event's columns narrow it down."""
    filters, params = narrowing_terms(query)
    # ORDER BY rank is sorted inside FTS5, so SQLite makes snippets for the rows it returns only.
    return SEARCH_SELECT + filters + " ORDER BY search_index.rank LIMIT ?", [query.text, *params, query.limit]


def run_search(db: sqlite3.Connection, text: str, sql: str, params: list[Any]) -> list[SearchHit]:
    """The hits of the statement :func:`search_sql` made; a query FTS5 cannot read is a UsageError."""
    try:
        rows = db.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        detail = str(exc)
        if "fts5" in detail or "syntax error" in detail or "no such column" in detail or "unterminated" in detail:
            raise UsageError(
                f"cannot read the search query {text!r}: {detail.removeprefix('fts5: ')}",
                'put words with punctuation in double quotes ("login-timeout"); operators are AND, OR, NOT,'
                " NEAR(), a trailing * for a prefix; see docs/search.md",
            ) from None
        raise
    return [SearchHit(*row) for row in rows]
