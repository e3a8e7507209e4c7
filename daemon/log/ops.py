"""The log's operations (docs/protocol.md): ``events.*``, ``sessions.*``, ``verify``, ``stats``,
``admin.rebuild`` and ``blobs.get``."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, replace
from typing import Any, cast

from daemon.agents.usage import latest_context
from daemon.contract import results
from daemon.contract.kinds import HOOK_PREFIX, Kind
from daemon.contract.results_cost import Counts
from daemon.cost.prices import PriceTable
from daemon.cost.sessions import session_usage, usage_json
from daemon.cost.settings import ModelSettings
from daemon.cost.tally import Tally
from daemon.heads.check import check_heads, merged
from daemon.log.service import EventLog
from daemon.projects import in_project
from daemon.protocol import error_message
from daemon.rpc.registry import Call, Ops
from daemon.rpc.requests import NoArgs, NonEmpty, Seq, Timestamp
from daemon.rpc.wire import RawJson, session_json, stats_json, verify_json
from store.base import EventQuery, EventStore, SessionInfo
from store.errors import Busy, UsageError
from store.events import parse_new_event

OPS = Ops(EventLog)

# Largest page an events.query answers with; clients page on with after_seq / before_seq.
MAX_PAGE = 5000
# Most events one append request may carry.
MAX_BATCH = 10_000


@dataclass(frozen=True, slots=True)
class Append:
    events: Any = None  # a list of events
    event: Any = None  # one event, for a client that sends one
    session: str | None = None


@OPS.op("events.append", Append, pipelined=True)
async def events_append(log: EventLog, request: Append, call: Call) -> dict[str, Any]:
    raw = request.events
    if raw is None and request.event is not None:
        raw = [request.event]
    if not isinstance(raw, list) or not raw:
        raise UsageError("events.append needs 'events' (a non-empty list) or 'event' (an object)")
    if len(raw) > MAX_BATCH:
        raise UsageError(f"at most {MAX_BATCH} events per request", "split the batch")
    batch = []
    for index, item in enumerate(raw):
        try:
            batch.append(parse_new_event(item, session=request.session))
        except UsageError as exc:
            where = f"event {index}: " if len(raw) > 1 else ""
            raise type(exc)(where + exc.message, exc.hint) from None
    results = await log.core.append(batch)
    # Answered once the usage it brought has moved its agents: a client that reads the states
    # next sees them.
    await log.evaluated(max((r.event.seq for r in results if r.created), default=0))
    return {"events": [{"seq": r.event.seq, "id": r.event.id, "created": r.created} for r in results]}


@dataclass(frozen=True, slots=True)
class Get:
    id: NonEmpty | None = None
    seq: Seq | None = None


@OPS.op("events.get", Get)
async def events_get(log: EventLog, request: Get, call: Call) -> dict[str, Any]:
    store = log.core.store
    if request.seq is not None:
        return (await store.get_by_seq(request.seq)).to_json()
    if request.id is None:
        raise UsageError("argument 'id' is required")
    return (await store.get(request.id)).to_json()


@dataclass(frozen=True, slots=True)
class Query:
    session: str | None = None
    kinds: list[str] | None = None
    since: Timestamp | None = None
    until: Timestamp | None = None
    after_seq: Seq | None = None
    before_seq: Seq | None = None
    order: str = "asc"
    limit: int | None = None

    def to_query(self, session: str | None, limit: int) -> EventQuery:
        if self.order not in ("asc", "desc"):
            raise UsageError("argument 'order' must be 'asc' or 'desc'")
        return EventQuery(
            session=session,
            kinds=tuple(self.kinds or ()),
            since=self.since,
            until=self.until,
            after_seq=self.after_seq,
            before_seq=self.before_seq,
            limit=limit,
            order="desc" if self.order == "desc" else "asc",
        )

    def limit_or(self, default: int) -> int:
        if self.limit is not None and self.limit < 1:
            raise UsageError("argument 'limit' must be at least 1")
        return default if self.limit is None else self.limit


async def _session(log: EventLog, name: str | None, may_be_new: bool = False) -> str | None:
    return None if name is None else await log.session_name(name, may_be_new)


@OPS.op("events.query", Query)
async def events_query(log: EventLog, request: Query, call: Call) -> RawJson:
    query = request.to_query(await _session(log, request.session), min(request.limit_or(MAX_PAGE), MAX_PAGE))
    # The page is built as text on the store's reader thread: payloads are never parsed here.
    events = await log.core.store.query_json(query)
    more = len(events) == query.limit and query.limit == MAX_PAGE
    session = "null" if query.session is None else json.dumps(query.session, ensure_ascii=False)
    texts = ",".join(text for _, text in events)
    return RawJson(f'{{"session":{session},"events":[{texts}],"more":{"true" if more else "false"}}}')


@OPS.op("events.count", Query)
async def events_count(log: EventLog, request: Query, call: Call) -> dict[str, Any]:
    """How many events the query matches (``limit`` and ``order`` are not used): a position in a
    session (``before_seq``), or what a kind filter leaves out."""
    query = request.to_query(await _session(log, request.session), MAX_PAGE)
    return {"session": query.session, "events": await log.core.store.count(query)}


@OPS.op("events.stream", Query)
async def events_stream(log: EventLog, request: Query, call: Call) -> dict[str, Any]:
    """Every matching event (up to ``limit``), as lines of pages, then the count.

    The next page is read while the client parses the one before: the socket's buffer and
    ``drain`` pace the daemon to the reader, so memory stays flat on any session.
    """
    total = request.limit_or(0) or None
    query = request.to_query(await _session(log, request.session), MAX_PAGE)
    request_id = json.dumps(call.request_id, ensure_ascii=False)
    sent = 0
    while total is None or sent < total:
        want = MAX_PAGE if total is None else min(MAX_PAGE, total - sent)
        page = await log.core.store.query_json(replace(query, limit=want))
        if page:
            texts = ",".join(text for _, text in page)
            await call.send(f'{{"id":{request_id},"events":[{texts}]}}\n'.encode())
            sent += len(page)
            last = page[-1][0]
            query = replace(query, before_seq=last) if query.order == "desc" else replace(query, after_seq=last)
        if len(page) < want:
            break
    return {"events": sent}


@dataclass(frozen=True, slots=True)
class Subscribe:
    session: str | None = None
    kinds: list[str] | None = None
    after_seq: Seq | None = None


@OPS.op("events.subscribe", Subscribe, streaming=True)
async def events_subscribe(log: EventLog, request: Subscribe, call: Call) -> None:
    """Stream events as they commit; with ``after_seq``, first those already committed after it."""
    session = await _session(log, request.session, may_be_new=True)
    kinds = tuple(request.kinds or ())
    after_seq = request.after_seq
    # Subscribe before reading the backlog, then skip what the backlog already sent: no gap.
    subscription = log.hub.subscribe(session, kinds)
    try:
        await call.send({"id": call.request_id, "ok": True, "result": {"subscribed": True, "session": session}})
        last = after_seq or 0
        if after_seq is not None:
            while True:
                page = await log.core.store.query(
                    EventQuery(session=session, kinds=kinds, after_seq=last, limit=MAX_PAGE)
                )
                for event in page:
                    await call.send({"id": call.request_id, "event": event.to_json()})
                    last = event.seq
                if len(page) < MAX_PAGE:
                    break
        closed = asyncio.create_task(call.closed.wait())
        try:
            while not call.closed.is_set():
                if subscription.overflowed:
                    dropped = Busy(
                        "subscriber fell too far behind and was dropped",
                        "resubscribe with after_seq set to the last seq you saw",
                    )
                    await call.send(error_message(call.request_id, dropped))
                    return
                getter = asyncio.create_task(subscription.queue.get())
                done, _ = await asyncio.wait({getter, closed}, return_when=asyncio.FIRST_COMPLETED)
                if getter not in done:
                    getter.cancel()
                    return
                event = getter.result()
                if event.seq > last:
                    await call.send({"id": call.request_id, "event": event.to_json()})
                    last = event.seq
        finally:
            closed.cancel()
    finally:
        log.hub.unsubscribe(subscription)


async def _session_json(
    store: EventStore, info: SessionInfo, windows: dict[str, int], usage: dict[str, Tally]
) -> results.Session:
    """A session with its source, project and context fill: at most two small queries, and
    none for a session whose kinds show no ``session.meta`` or ``usage`` event; its usage from
    ``usage`` (of :func:`session_usage`, one read for every session listed)."""
    meta = None
    if Kind.SESSION_META in info.kinds:
        first = await store.query(EventQuery(session=info.session, kinds=(Kind.SESSION_META,), limit=1))
        meta = first[0].payload if first else None
    elif any(kind.startswith(HOOK_PREFIX) for kind in info.kinds):
        # A live session known from its hooks alone: their payloads carry its working directory.
        first = await store.query(EventQuery(session=info.session, kinds=("hook.*",), limit=1))
        cwd = first[0].payload.get("cwd") if first else None
        source = "codex" if first and first[0].kind == Kind.HOOK_AGENT_TURN_COMPLETE else "claude-code"
        meta = {"source": source, "cwd": cwd} if isinstance(cwd, str) else None
    fill = None
    if Kind.USAGE in info.kinds:
        context = await latest_context(store, info.session, kinds=info.kinds)
        if context.context_tokens is not None:
            fill = context.context_fill(*context.window(overrides=windows))
    return session_json(info, meta, fill, cast(Counts, usage_json(usage.get(info.session))))


@dataclass(frozen=True, slots=True)
class SessionFilter:
    """The sessions to list: active at or after ``since`` and before ``until`` (their span
    overlaps the window), of ``source``, run in ``project`` (a path, or a folder's or
    repository's name: daemon/projects.py)."""

    since: Timestamp | None = None
    until: Timestamp | None = None
    source: str | None = None
    project: str | None = None

    def in_time(self, info: SessionInfo) -> bool:
        return (self.since is None or info.last_ts >= self.since) and (self.until is None or info.first_ts < self.until)

    def chooses(self, session: results.Session) -> bool:
        source = self.source is None or (session["source"] or "").lower() == self.source.lower()
        return source and (self.project is None or in_project(session["project"], self.project))


@OPS.op("sessions.list", SessionFilter)
async def sessions_list(log: EventLog, request: SessionFilter, call: Call) -> results.SessionList:
    store, settings = log.core.store, log.core.settings[ModelSettings]
    usage = await session_usage(store, PriceTable(settings.prices))
    listed = [
        await _session_json(store, s, settings.windows, usage) for s in await store.sessions() if request.in_time(s)
    ]
    return {"sessions": [s for s in listed if request.chooses(s)]}


@dataclass(frozen=True, slots=True)
class Session:
    session: str


@OPS.op("sessions.get", Session)
async def sessions_get(log: EventLog, request: Session, call: Call) -> results.Session:
    info = await log.core.store.session(await log.session_name(request.session))
    settings = log.core.settings[ModelSettings]
    usage = await session_usage(log.core.store, PriceTable(settings.prices), info.session)
    return await _session_json(log.core.store, info, settings.windows, usage)


@dataclass(frozen=True, slots=True)
class Verify:
    session: str | None = None
    deep: bool = False  # SQLite's integrity_check rather than quick_check


@OPS.op("verify", Verify, progress=True)
async def verify(log: EventLog, request: Verify, call: Call) -> dict[str, Any]:
    report = await log.core.store.verify(await _session(log, request.session), call.progress)
    # The database's own check and its recorded tip are of the whole file: for the whole log, or when asked.
    checked = request.session is None or request.deep
    database = await log.core.store.check_database(request.deep) if checked else None
    # The whole log is also checked against its signed tree heads (daemon/heads/check.py), the
    # events committed since the last head first signed, as the daemon would within a second.
    heads = None
    if request.session is None:
        heads = await check_heads(log.core, refused=await log.sign())
    await call.progress_sent()
    answer = verify_json(merged(report, heads), database)
    return {**answer, "heads": None if heads is None else heads.to_json()}


@OPS.op("stats", NoArgs)
async def stats(log: EventLog, request: NoArgs, call: Call) -> results.Stats:
    return stats_json(await log.core.store.stats())


@OPS.op("log.applied", NoArgs)
async def log_applied(log: EventLog, request: NoArgs, call: Call) -> dict[str, Any]:
    """Answered once every event acknowledged before it is applied to the derived tables (the
    search index, the session tables, the usage projection, the Merkle tree), which the
    projector otherwise brings up behind the appends: `toka import --wait`."""
    events, sessions = await log.core.store.totals()
    return {"events": events, "sessions": sessions}


@OPS.op("admin.rebuild", NoArgs)
async def admin_rebuild(log: EventLog, request: NoArgs, call: Call) -> dict[str, Any]:
    store = log.core.store
    return {
        "sessions": await store.rebuild_projections(),
        "search_events": await store.rebuild_search_index(),
        "embed_events": await log.re_embed(),
    }


@dataclass(frozen=True, slots=True)
class Blob:
    digest: str


@OPS.op("blobs.get", Blob)
async def blobs_get(log: EventLog, request: Blob, call: Call) -> dict[str, Any]:
    digest, payload = await log.core.store.payload(request.digest)
    return {"digest": digest, "payload": payload}
