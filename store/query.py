"""One meaning for an :class:`EventQuery`, written as a Python predicate and as SQL; the terms
that narrow a search and a read of the usage table, shared by both SQL backends; and SQLite's
placeholders written as psycopg's."""

from __future__ import annotations

from typing import Any

from store.base import EventQuery
from store.events import Event
from store.search import SearchQuery


def _kind_matches(kind: str, patterns: tuple[str, ...]) -> bool:
    for pattern in patterns:
        if pattern.endswith(".*"):
            if kind == pattern[:-2] or kind.startswith(pattern[:-1]):
                return True
        elif kind == pattern:
            return True
    return False


def matches(event: Event, query: EventQuery) -> bool:
    return (
        (query.session is None or event.session == query.session)
        and (not query.kinds or _kind_matches(event.kind, query.kinds))
        and (query.since is None or event.ts >= query.since)
        and (query.until is None or event.ts < query.until)
        and (query.after_seq is None or event.seq > query.after_seq)
        and (query.before_seq is None or event.seq < query.before_seq)
    )


def where_clause(query: EventQuery) -> tuple[str, list[Any]]:
    """The WHERE, ORDER BY and LIMIT of a query over ``events e``."""
    terms: list[str] = []
    params: list[Any] = []
    if query.session is not None:
        terms.append("e.session = ?")
        params.append(query.session)
    if query.kinds:
        alternatives = []
        for pattern in query.kinds:
            if pattern.endswith(".*"):
                alternatives.append("(e.kind = ? OR substr(e.kind, 1, ?) = ?)")
                params += [pattern[:-2], len(pattern) - 1, pattern[:-1]]
            else:
                alternatives.append("e.kind = ?")
                params.append(pattern)
        terms.append("(" + " OR ".join(alternatives) + ")")
    for column, op, value in (
        ("e.ts", ">=", query.since),
        ("e.ts", "<", query.until),
        ("e.seq", ">", query.after_seq),
        ("e.seq", "<", query.before_seq),
    ):
        if value is not None:
            terms.append(f"{column} {op} ?")
            params.append(value)
    sql = (" WHERE " + " AND ".join(terms)) if terms else ""
    sql += " ORDER BY e.seq " + ("DESC" if query.order == "desc" else "ASC")
    if query.limit is not None:
        sql += " LIMIT ?"
        params.append(query.limit)
    return sql, params


def narrowing_terms(query: SearchQuery) -> tuple[str, list[Any]]:
    """The terms that narrow a search down by the events' own columns, each written as
    ``AND ...`` over ``events e``, with their parameters: what both SQL backends add to the text
    match."""
    narrowing = EventQuery(session=query.session, kinds=query.kinds, since=query.since, until=query.until)
    sql, params = where_clause(narrowing)
    terms = sql.split(" ORDER BY")[0].replace(" WHERE ", " AND ", 1)
    if query.agent is not None:
        terms += " AND e.agent = ?"
        params.append(query.agent)
    return terms, params


def bucket_where(
    since: int | None, until: int | None, session: str | None, models: tuple[str, Any] | None = None
) -> tuple[str, list[Any]]:
    """The WHERE of a read of the usage table: buckets that start in [since, until), of one
    session or of all, and ``models`` (the backend's term for a list of models, with its
    parameter) when given; SQLite's ``?`` placeholders."""
    terms: list[str] = []
    params: list[Any] = []
    for term, value in (("bucket >= ?", since), ("bucket < ?", until), ("session = ?", session)):
        if value is not None:
            terms.append(term)
            params.append(value)
    if models is not None:
        terms.append(models[0])
        params.append(models[1])
    return (" WHERE " + " AND ".join(terms) if terms else ""), params


def dialect(sql: str) -> str:
    """A statement written with SQLite's ``?`` placeholders, in psycopg's."""
    return sql.replace("?", "%s")
