"""The forwarder: the log sent to a collector as OpenTelemetry traces while it is written, when
``export.otlp.endpoint`` is set.

Off the append path: the server hands it each commit's events (:meth:`Forwarder.committed`),
which it keeps in a bounded queue (``export.otlp.queue_events``) and nothing more; sending runs
in a task of its own. When the queue is full (the collector is down, or slower than the log
grows) it keeps no more events in memory and reads them back from the log once it has caught up
with the queue, so no event is lost and an append never waits for a collector. Those events are
counted (``overflowed``), and so are spans a collector refused for good (``dropped``).

When spans are complete, and so sent:

- a model request's span, with its usage event; a tool call's, with its result;
- the agent spans of a session (daemon/export/agents.py), when the session ends (Claude Code's
  SessionEnd, its main agent terminated) or has had no new event for
  ``export.otlp.session_idle_s``; a session that goes on after that has them sent again, with
  the same ids and a later end, and a collector keeps the latest (calls still open then are sent
  as spans without a result, and again with it should it come).

The cursor (store/cursors.py, named for the endpoint) holds the seq of the last event whose spans
the collector took, the tool calls open at that point and the sessions whose agent spans are
still to come. It is saved after each delivery, never before: a daemon stopped, or a collector
down, resumes at the event after it, with no gap and, after a clean stop, no repeat. (A daemon
killed between a delivery and its save sends that delivery again: the ids are the same, so a
collector that keeps spans by id keeps them once.) A new endpoint starts at the end of the log:
``toka export otel`` sends the history.

On a log several daemons share (PostgreSQL), set the endpoint on one daemon only: each daemon
sees every event and would send it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import deque
from typing import TYPE_CHECKING, Any

from daemon.component import Component
from daemon.core import Core
from daemon.cost.prices import PriceTable
from daemon.cost.settings import ModelSettings
from daemon.export.agents import AgentSpans, ends_session
from daemon.export.calls import CallSpans
from daemon.export.content import content_of
from daemon.export.settings import OtlpExportSettings
from daemon.export.spans import Span
from daemon.export.target import PROTOCOL, traces_url
from daemon.otel.extra import INSTALL, missing
from daemon.redact.settings import RedactionSettings
from daemon.tasks import finish_or_cancel
from store.base import EventQuery
from store.errors import TokaError
from store.events import Event, format_ts

if TYPE_CHECKING:
    from daemon.export.collector import Collector, Unsent

log = logging.getLogger("toka.daemon")

CURSOR = "export.otlp "  # the cursor's name: this and the traces URL


class Stopped(Exception):
    """The daemon stops while spans wait to be taken: they are sent after its restart."""


class Forwarder(Component):
    def __init__(self, core: Core, prices: PriceTable | None = None) -> None:
        self.core = core
        self.settings = core.settings[OtlpExportSettings]
        self._prices = prices
        self.url = traces_url(self.settings.endpoint) if self.settings.endpoint else None
        self.error: str | None = None
        self.queue: deque[Event] = deque()
        self.behind = False  # events past the queue are read back from the log
        self.published = 0  # the last seq committed
        self.taken = 0  # the last seq handed to the spans
        self.cursor = 0  # the last seq whose spans were delivered
        self.open: dict[str, float] = {}  # sessions whose agent spans are to come -> when last seen
        self.calls: CallSpans | None = None
        self.collector: Collector | None = None
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.counts = {"spans": 0, "dropped": 0, "requests": 0, "retries": 0, "overflowed": 0}
        self.retrying: str | None = None  # the failure being retried, while it is
        self.last_sent: int | None = None  # when the collector last took spans (UTC microseconds)

    @property
    def name(self) -> str:
        return f"{CURSOR}{self.url}"

    async def start(self) -> None:
        """Resume from the cursor (or the end of the log, the first time) and start sending;
        nothing when no endpoint is set. Called before anything is committed."""
        if self.url is None:
            return
        try:
            from daemon.export.collector import Collector
        except ImportError as exc:
            self.error = f"export.otlp.endpoint is set but needs {missing(exc)}: {INSTALL}"
            log.error("export: %s", self.error)
            return
        prices = self._prices if self._prices is not None else PriceTable(self.core.settings[ModelSettings].prices)
        content = content_of(self.settings.include_content, self.core.settings[RedactionSettings].kinds)
        self.calls = CallSpans(prices, content, store=self.core.store)
        try:
            latest = await self.core.store.query(EventQuery(order="desc", limit=1))
            self.published = latest[0].seq if latest else 0
            saved = await self.core.store.cursor(self.name)
            if saved is None:
                self.cursor = self.published
                await self._save()
            else:
                self._restore(json.loads(saved))
        except TokaError as exc:  # a damaged or unreachable database: the daemon serves on without it
            self.error = f"cannot resume forwarding: {exc.message}"
            log.error("export: %s", self.error)
            return
        except (ValueError, KeyError, TypeError) as exc:
            self.error = f"the saved cursor {self.name!r} cannot be read ({exc}): forwarding is off"
            log.error("export: %s", self.error)
            return
        self.taken = self.cursor
        self.behind = self.published > self.cursor
        self.collector = Collector(self.url, self.settings.headers, self.settings.request_timeout_s)
        self._task = asyncio.create_task(self._run(), name="export")

    def _restore(self, state: dict[str, Any]) -> None:
        assert self.calls is not None
        self.cursor = int(state["seq"])
        self.open = {str(session): float(seen) for session, seen in state.get("open", {}).items()}
        for session, call, event_id in state.get("calls", []):
            self.calls.calls[(session, call)] = event_id
            self.calls.known.add(session)

    async def _save(self) -> None:
        calls = [] if self.calls is None else self.calls.calls.items()
        state = {
            "seq": self.cursor,
            "open": self.open,
            "calls": [[session, call, held if isinstance(held, str) else held.id] for (session, call), held in calls],
        }
        await self.core.store.save_cursor(self.name, json.dumps(state, separators=(",", ":")))

    def committed(self, events: list[Event], own: bool) -> None:
        """Events just committed, in seq order: queued while there is room, else read back later."""
        if self._task is None or not events:
            return
        self.published = max(self.published, events[-1].seq)
        if not self.behind and len(self.queue) + len(events) <= self.settings.queue_events:
            self.queue.extend(events)
        else:
            self.behind = True
            self.counts["overflowed"] += len(events)
        self._wake.set()

    async def stop(self, deadline: float) -> None:
        """Stop: a delivery under way may finish (within ``deadline``) and its cursor is saved;
        a wait to try again ends at once."""
        if self._task is None:
            return
        self._stopping.set()
        self._wake.set()
        await finish_or_cancel([self._task], deadline)
        if self.collector is not None:
            await self.collector.close()

    async def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                await self._round()
            except Stopped:
                return
            except Exception as exc:  # the log cannot be read, the cursor not written, or a bug: a round lost
                if isinstance(exc, TokaError):
                    log.warning("export: %s", exc.message)
                else:
                    log.exception("export: a round failed")
                self.retrying = getattr(exc, "message", None) or f"internal error: {exc}"
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), self.settings.retry_max_s)
                with contextlib.suppress(TokaError):
                    await self._reload()

    async def _reload(self) -> None:
        """Back to the saved cursor: the events of a round that failed are taken again."""
        saved = await self.core.store.cursor(self.name)
        assert self.calls is not None
        self.calls = CallSpans(self.calls.prices, self.calls.content, store=self.core.store)
        self.open = {}
        if saved is not None:
            self._restore(json.loads(saved))
        self.queue.clear()
        self.taken, self.behind = self.cursor, True

    async def _round(self) -> None:
        """Take the next events, send the spans they complete and those of sessions now due,
        then save the cursor."""
        assert self.calls is not None
        events = await self._take()
        now = self.core.clock()
        spans = await self.calls.feed(events)
        ended = set()
        for event in events:
            self.open[event.session] = now
            if ends_session(event):
                ended.add(event.session)
        through = events[-1].seq if events else self.cursor
        idle = self.settings.session_idle_s
        due = ended | {session for session, seen in self.open.items() if now - seen >= idle}
        for session in sorted(due):
            spans += await self.calls.unfinished(session)
            spans += await self._agent_spans(session, through)
        if spans:
            await self._send(spans)
        for session in due:
            del self.open[session]
            self.calls.forget(session)
        if events or due:
            self.cursor = through
            await self._save()

    async def _take(self) -> list[Event]:
        """Up to a batch of the events after those taken: from the queue, else from the log; or
        none, once the next session is due to have its agent spans sent."""
        batch = self.settings.batch_spans
        while True:
            if self._stopping.is_set():
                raise Stopped
            if self.queue:
                taken = [self.queue.popleft() for _ in range(min(batch, len(self.queue)))]
                taken = [event for event in taken if event.seq > self.taken]
                if taken:
                    self.taken = taken[-1].seq
                    return taken
                continue
            if self.behind:
                found = await self.core.store.query(EventQuery(after_seq=self.taken, limit=batch))
                if found:
                    self.taken = found[-1].seq
                if self.taken >= self.published:
                    self.behind = False
                if found:
                    return found
                continue
            self._wake.clear()
            wait = self._next_due()
            if wait is not None and wait <= 0:
                return []
            try:
                await asyncio.wait_for(self._wake.wait(), wait)
            except TimeoutError:
                return []

    def _next_due(self) -> float | None:
        if not self.open:
            return None
        return min(self.open.values()) + self.settings.session_idle_s - self.core.clock()

    async def _agent_spans(self, session: str, through: int) -> list[Span]:
        kinds = self.core.settings[RedactionSettings].kinds
        agents = AgentSpans(session, content_of(self.settings.include_content, kinds))
        async for event in self.core.store.scan(EventQuery(session=session, before_seq=through + 1)):
            agents.feed(event)
        return agents.spans()

    async def _send(self, spans: list[Span]) -> None:
        from daemon.export.collector import deliver

        assert self.collector is not None
        size = self.settings.batch_spans
        for start in range(0, len(spans), size):
            try:
                delivered = await deliver(
                    self.collector,
                    spans[start : start + size],
                    max_wait_s=self.settings.retry_max_s,
                    wait=self._wait,
                    retrying=self._retrying,
                )
            except Exception as exc:  # Unsent while waiting to try again: the daemon stops
                raise Stopped from exc
            self.retrying = None
            self.counts["spans"] += delivered.spans
            self.counts["dropped"] += delivered.dropped
            self.counts["requests"] += delivered.requests
            self.last_sent = round(self.core.clock() * 1_000_000)
            if delivered.dropped:
                log.warning("export: the collector refused %d spans for good", delivered.dropped)

    async def _wait(self, seconds: float) -> bool:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), seconds)
        return not self._stopping.is_set()

    def _retrying(self, unsent: Unsent, wait_s: float) -> None:
        self.counts["retries"] += 1
        if self.retrying != unsent.message:
            log.warning("export: %s; trying again", unsent.message)
        self.retrying = unsent.message

    def status(self) -> dict[str, Any] | None:
        """The ``export`` part of ``status`` (docs/json.md): None while export.otlp.endpoint is empty."""
        if self.url is None:
            return None
        state = (
            "error"
            if self.error
            else "retrying"
            if self.retrying
            else "sending"
            if self.behind or self.queue
            else "idle"
        )
        return {
            "endpoint": self.url,
            "protocol": PROTOCOL,
            "include_content": self.settings.include_content,
            "state": state,
            "cursor": self.cursor,
            "behind": max(0, self.published - self.cursor),
            "queued": len(self.queue),
            "open_sessions": len(self.open),
            "sent_spans": self.counts["spans"],
            "dropped_spans": self.counts["dropped"],
            "overflowed_events": self.counts["overflowed"],
            "requests": self.counts["requests"],
            "retries": self.counts["retries"],
            "last_sent": None if self.last_sent is None else format_ts(self.last_sent),
            "last_error": self.retrying,
            "error": self.error,
        }
