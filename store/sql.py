"""What the two SQL backends' store classes share: the methods that run one of the backend's
parts on a connection and hand back its answer, written once.

Each backend names its parts the same way (store/sqlite/ and store/postgres/: ``reads``,
``projections``, ``usage``, ``search``) and gives them here as :class:`Parts`, each a function of
a connection first: SQLite's plain functions, run on a connection's thread, PostgreSQL's
coroutines. A backend says how a part is run, ``_read`` on the reader's connection and ``_write``
on the writer's, and the methods below only choose the part and shape the statement
(store/query.py's WHERE clause, the same for both dialects).
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from store.base import EventQuery, EventStore, SessionInfo
from store.errors import NotFound
from store.events import Event
from store.query import count_sql, where_clause
from store.rows import event_of
from store.usage import UsageRow


@dataclass(frozen=True, slots=True)
class Parts:
    """A SQL backend's functions the shared methods run, each taking the connection first."""

    select: str  # the statement reading events with their payloads, store/rows.py's columns
    fetch_rows: Callable[..., Any]  # (sql, params) -> the rows
    fetch_json: Callable[..., Any]  # (sql, params) -> (seq, the event as JSON text) for each row
    get_event: Callable[..., Any]  # (id or unique prefix) -> Event
    get_payload: Callable[..., Any]  # (digest or unique prefix) -> (digest, payload)
    read_sessions: Callable[..., Any]  # (name or None for all) -> [SessionInfo]
    read_usage: Callable[..., Any]  # (since, until, session) -> [UsageRow]
    sum_usage_rows: Callable[..., Any]  # EventStore._sum_usage's arguments -> [UsageRow]
    rebuild_projections: Callable[..., Any]  # () -> the number of sessions
    rebuild_search_index: Callable[..., Any]  # () -> the number of events indexed


class SqlStore(EventStore):
    """An :class:`EventStore` whose log is in SQL tables (store/rows.py's columns)."""

    parts: ClassVar[Parts]

    @abc.abstractmethod
    async def _read(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(connection, *args)`` on the connection reads take."""

    @abc.abstractmethod
    async def _write(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(connection, *args)`` on the writer's connection, one write at a time."""

    async def get(self, event_id: str) -> Event:
        event: Event = await self._read(self.parts.get_event, event_id)
        return event

    async def payload(self, digest: str) -> tuple[str, dict[str, Any]]:
        found: tuple[str, dict[str, Any]] = await self._read(self.parts.get_payload, digest)
        return found

    async def get_by_seq(self, seq: int) -> Event:
        rows = await self._read(self.parts.fetch_rows, self.parts.select + " WHERE e.seq = ?", (seq,))
        if not rows:
            raise NotFound(f"no event at seq {seq}", "seqs start at 1; see `toka events SESSION`")
        return event_of(rows[0])

    async def query(self, query: EventQuery) -> list[Event]:
        sql, params = where_clause(query)
        return [event_of(row) for row in await self._read(self.parts.fetch_rows, self.parts.select + sql, params)]

    async def scan(self, query: EventQuery, page: int = 5000) -> AsyncIterator[Event]:
        """:meth:`EventStore.scan`, each event made from its row as it is yielded rather than a
        page of them at once: a replay of a long session keeps few events alive, and a page of
        events young enough to be collected does not set off full garbage collections."""
        after = query.after_seq or 0
        while True:
            sql, params = where_clause(replace(query, after_seq=after, limit=page, order="asc"))
            rows = await self._read(self.parts.fetch_rows, self.parts.select + sql, params)
            for row in rows:
                event = event_of(row)
                after = event.seq
                yield event
            if len(rows) < page:
                return

    async def query_json(self, query: EventQuery) -> list[tuple[int, str]]:
        # The payloads spliced into the JSON as stored, never parsed (EventStore.query_json).
        sql, params = where_clause(query)
        found: list[tuple[int, str]] = await self._read(self.parts.fetch_json, self.parts.select + sql, params)
        return found

    async def count(self, query: EventQuery) -> int:
        sql, params = count_sql(query)
        rows = await self._read(self.parts.fetch_rows, sql, params)
        return int(rows[0][0])

    async def sessions(self) -> list[SessionInfo]:
        await self.project()  # the derived tables hold every append acknowledged so far
        found: list[SessionInfo] = await self._read(self.parts.read_sessions, None)
        return found

    async def session(self, name: str) -> SessionInfo:
        await self.project()
        found: list[SessionInfo] = await self._read(self.parts.read_sessions, name)
        return found[0]

    async def usage_rows(
        self, since: int | None = None, until: int | None = None, session: str | None = None
    ) -> list[UsageRow]:
        await self.project()
        rows: list[UsageRow] = await self._read(self.parts.read_usage, since, until, session)
        return rows

    async def _sum_usage(self, *args: Any) -> list[UsageRow]:
        await self.project()
        rows: list[UsageRow] = await self._read(self.parts.sum_usage_rows, *args)  # one GROUP BY over the usage table
        return rows

    async def rebuild_projections(self) -> int:
        await self.project()
        return int(await self._write(self.parts.rebuild_projections))

    async def rebuild_search_index(self) -> int:
        await self.project()
        return int(await self._write(self.parts.rebuild_search_index))
