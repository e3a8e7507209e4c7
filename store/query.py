"""One meaning for an :class:`EventQuery`, written as a Python predicate and as SQL; the terms
that narrow a search and a read of the usage table, shared by both SQL backends; and SQLite's
placeholders written as psycopg's."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from store.base import EventQuery
from store.events import Event
from store.kinds import kind_taken, split_kinds
from store.search import SearchQuery


def matches(event: Event, query: EventQuery) -> bool:
    return (
        (query.session is None or event.session == query.session)
        and kind_taken(event.kind, query.kinds)
        and (query.since is None or event.ts >= query.since)
        and (query.until is None or event.ts < query.until)
        and (query.after_seq is None or event.seq > query.after_seq)
        and (query.before_seq is None or event.seq < query.before_seq)
    )


def _kinds_sql(patterns: tuple[str, ...], params: list[Any]) -> str:
    """``(e.kind = ? OR ...)``: any of ``patterns``, its parameters added to ``params``."""
    alternatives = []
    for pattern in patterns:
        if pattern.endswith(".*"):
            alternatives.append("(e.kind = ? OR substr(e.kind, 1, ?) = ?)")
            params += [pattern[:-2], len(pattern) - 1, pattern[:-1]]
        else:
            alternatives.append("e.kind = ?")
            params.append(pattern)
    return "(" + " OR ".join(alternatives) + ")"


def where_clause(query: EventQuery) -> tuple[str, list[Any]]:
    """The WHERE, ORDER BY and LIMIT of a query over ``events e``."""
    terms: list[str] = []
    params: list[Any] = []
    if query.session is not None:
        terms.append("e.session = ?")
        params.append(query.session)
    wanted, left_out = split_kinds(query.kinds)
    if wanted:
        terms.append(_kinds_sql(wanted, params))
    if left_out:
        terms.append("NOT " + _kinds_sql(left_out, params))
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


def count_sql(query: EventQuery) -> tuple[str, list[Any]]:
    """``SELECT count(*)`` of the events ``query`` matches (its limit and order not used)."""
    sql, params = where_clause(replace(query, limit=None))
    return "SELECT count(*) FROM events e" + sql.split(" ORDER BY")[0], params


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
