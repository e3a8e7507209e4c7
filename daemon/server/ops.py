"""The operations the daemon answers, one small function each (docs/protocol.md).

A handler gets the request's context and its ``args`` object, checks the args, makes one call
into the store, the group committer or the hub, and returns a JSON-ready result. Streaming
handlers send their extra lines through ``ctx.send``.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from daemon.agents.usage import latest_context
from daemon.protocol import error_message
from daemon.server.wire import RawJson, session_json, stats_json, verify_json
from daemon.version import PROTOCOL_VERSION, VERSION
from store.base import EventQuery, EventStore, SessionInfo
from store.errors import Busy, NotFound, UsageError
from store.events import parse_new_event, parse_ts

if TYPE_CHECKING:
    from daemon.server.process import Daemon

# Largest page an events.query answers with; clients page on with after_seq / before_seq.
MAX_PAGE = 5000
# Most events one append request may carry.
MAX_BATCH = 10_000


@dataclass
class Context:
    daemon: Daemon
    request_id: Any
    send: Callable[[dict[str, Any] | bytes], Coroutine[Any, Any, None]]  # a message, or a line
    closed: asyncio.Event  # set when the client hangs up or sends anything during a stream


Handler = Callable[[Context, dict[str, Any]], Awaitable[Any]]
OPS: dict[str, Handler] = {}


def op(name: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        OPS[name] = handler
        return handler

    return register


def _arg(args: dict[str, Any], name: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
    value = args.get(name, default)
    if value is None:
        return default
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        wanted = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise UsageError(f"argument {name!r} must be {wanted}, got {type(value).__name__}")
    return value


def _required(args: dict[str, Any], name: str, kind: type) -> Any:
    value = _arg(args, name, kind)
    if value is None:
        raise UsageError(f"argument {name!r} is required")
    return value


def _ts_arg(args: dict[str, Any], name: str) -> int | None:
    value = _arg(args, name, (str, int, float))
    try:
        return None if value is None else parse_ts(value)
    except UsageError as exc:
        raise UsageError(f"argument {name!r}: {exc.message}", exc.hint) from None


# Seqs are SQLite INTEGERs: a number past them names no event and cannot even be compared.
MAX_SEQ = 2**63 - 1


def _seq_arg(args: dict[str, Any], name: str) -> int | None:
    value: int | None = _arg(args, name, int)
    if value is not None and not 0 <= value <= MAX_SEQ:
        raise UsageError(f"argument {name!r} must be a seq, from 0 to {MAX_SEQ}")
    return value


def _kinds(args: dict[str, Any]) -> tuple[str, ...]:
    kinds = _arg(args, "kinds", list, [])
    if not all(isinstance(k, str) for k in kinds):
        raise UsageError("argument 'kinds' must be a list of strings")
    return tuple(kinds)


async def _session_name(
    ctx: Context, args: dict[str, Any], required: bool = True, may_be_new: bool = False
) -> str | None:
    """The full session name for a name or unique prefix (NotFound / Ambiguous otherwise).

    ``may_be_new``: a name that matches nothing is taken as it is (following a session that
    has not started yet).
    """
    name: str | None = _arg(args, "session", str)
    if name is None:
        if required:
            raise UsageError("argument 'session' is required")
        return None
    try:
        return (await ctx.daemon.store.session(name)).session
    except NotFound:
        if may_be_new and name:
            return name
        raise


@op("hello")
async def hello(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    return {"version": VERSION, "protocol": PROTOCOL_VERSION, "pid": os.getpid()}


@op("status")
async def status(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    daemon = ctx.daemon
    sessions = await daemon.store.sessions()
    return {
        "version": VERSION,
        "protocol": PROTOCOL_VERSION,
        "pid": os.getpid(),
        "uptime_s": round(time.monotonic() - daemon.started, 3),
        "database": daemon.store.location,
        "durability": daemon.settings.durability,
        "socket": str(daemon.paths.socket),
        "events": sum(s.events for s in sessions),
        "sessions": len(sessions),
        "clients": daemon.clients,
        "subscribers": len(daemon.hub),
        "commits": daemon.committer.groups,
        "watch": None if daemon.watcher is None else daemon.watcher.status(),
        "agents_at_risk": _at_risk(daemon),
    }


# The states `status` reports, the worst first.
_AT_RISK = ("ERROR", "CRITICAL", "HANDOFF_PENDING", "WARNING")


def _at_risk(daemon: Daemon) -> list[dict[str, Any]]:
    """Agents in trouble or close to it, worst first, with their fill when known."""
    found = []
    for agent in daemon.lifecycle.agents:
        if agent.state in _AT_RISK:
            window, _ = daemon.lifecycle.window(agent)
            fill = None if agent.figures is None else agent.figures.fill_pct(window)
            found.append({"id": agent.id, "state": agent.state, "fill_pct": fill, "detail": agent.detail})
    return sorted(found, key=lambda a: (_AT_RISK.index(a["state"]), -(a["fill_pct"] or 0), a["id"]))


@op("events.append")
async def events_append(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    raw = args.get("events")
    if raw is None and "event" in args:
        raw = [args["event"]]
    if not isinstance(raw, list) or not raw:
        raise UsageError("events.append needs 'events' (a non-empty list) or 'event' (an object)")
    if len(raw) > MAX_BATCH:
        raise UsageError(f"at most {MAX_BATCH} events per request", "split the batch")
    session = _arg(args, "session", str)
    batch = []
    for index, item in enumerate(raw):
        try:
            batch.append(parse_new_event(item, session=session))
        except UsageError as exc:
            where = f"event {index}: " if len(raw) > 1 else ""
            raise type(exc)(where + exc.message, exc.hint) from None
    results = await ctx.daemon.committer.append(batch)
    # Answered once the usage it brought has moved its agents: a client that reads the states
    # next sees them.
    await ctx.daemon.lifecycle.evaluated(max((r.event.seq for r in results if r.created), default=0))
    return {"events": [{"seq": r.event.seq, "id": r.event.id, "created": r.created} for r in results]}


@op("events.get")
async def events_get(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    store = ctx.daemon.store
    seq = _seq_arg(args, "seq")
    if seq is not None:
        return (await store.get_by_seq(seq)).to_json()
    event_id = _required(args, "id", str)
    if not event_id:
        raise UsageError("argument 'id' must not be empty")
    return (await store.get(event_id)).to_json()


def _query(args: dict[str, Any], session: str | None) -> EventQuery:
    order = _arg(args, "order", str, "asc")
    if order not in ("asc", "desc"):
        raise UsageError("argument 'order' must be 'asc' or 'desc'")
    limit = _arg(args, "limit", int, MAX_PAGE)
    if limit < 1:
        raise UsageError("argument 'limit' must be at least 1")
    return EventQuery(
        session=session,
        kinds=_kinds(args),
        since=_ts_arg(args, "since"),
        until=_ts_arg(args, "until"),
        after_seq=_seq_arg(args, "after_seq"),
        before_seq=_seq_arg(args, "before_seq"),
        limit=min(limit, MAX_PAGE),
        order=order,
    )


@op("events.query")
async def events_query(ctx: Context, args: dict[str, Any]) -> RawJson:
    query = _query(args, await _session_name(ctx, args, required=False))
    # The page is built as text on the store's reader thread: payloads are never parsed here.
    events = await ctx.daemon.store.query_json(query)
    more = len(events) == query.limit and query.limit == MAX_PAGE
    session = "null" if query.session is None else json.dumps(query.session, ensure_ascii=False)
    texts = ",".join(text for _, text in events)
    return RawJson(f'{{"session":{session},"events":[{texts}],"more":{"true" if more else "false"}}}')


@op("events.stream")
async def events_stream(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    """Every matching event (up to ``limit``), as lines of pages, then the count.

    The next page is read while the client parses the one before: the socket's buffer and
    ``drain`` pace the daemon to the reader, so memory stays flat on any session.
    """
    total = _arg(args, "limit", int)
    if total is not None and total < 1:
        raise UsageError("argument 'limit' must be at least 1")
    query = _query({**args, "limit": MAX_PAGE}, await _session_name(ctx, args, required=False))
    request_id = json.dumps(ctx.request_id, ensure_ascii=False)
    sent = 0
    while total is None or sent < total:
        want = MAX_PAGE if total is None else min(MAX_PAGE, total - sent)
        page = await ctx.daemon.store.query_json(replace(query, limit=want))
        if page:
            texts = ",".join(text for _, text in page)
            await ctx.send(f'{{"id":{request_id},"events":[{texts}]}}\n'.encode())
            sent += len(page)
            last = page[-1][0]
            query = replace(query, before_seq=last) if query.order == "desc" else replace(query, after_seq=last)
        if len(page) < want:
            break
    return {"events": sent}


@op("events.subscribe")
async def events_subscribe(ctx: Context, args: dict[str, Any]) -> None:
    """Stream events as they commit; with ``after_seq``, first those already committed after it."""
    session = await _session_name(ctx, args, required=False, may_be_new=True)
    kinds = _kinds(args)
    after_seq = _seq_arg(args, "after_seq")
    daemon = ctx.daemon
    # Subscribe before reading the backlog, then skip what the backlog already sent: no gap.
    subscription = daemon.hub.subscribe(session, kinds)
    try:
        await ctx.send({"id": ctx.request_id, "ok": True, "result": {"subscribed": True, "session": session}})
        last = after_seq or 0
        if after_seq is not None:
            while True:
                page = await daemon.store.query(
                    EventQuery(session=session, kinds=kinds, after_seq=last, limit=MAX_PAGE)
                )
                for event in page:
                    await ctx.send({"id": ctx.request_id, "event": event.to_json()})
                    last = event.seq
                if len(page) < MAX_PAGE:
                    break
        closed = asyncio.create_task(ctx.closed.wait())
        try:
            while not ctx.closed.is_set():
                if subscription.overflowed:
                    dropped = Busy(
                        "subscriber fell too far behind and was dropped",
                        "resubscribe with after_seq set to the last seq you saw",
                    )
                    await ctx.send(error_message(ctx.request_id, dropped))
                    return
                getter = asyncio.create_task(subscription.queue.get())
                done, _ = await asyncio.wait({getter, closed}, return_when=asyncio.FIRST_COMPLETED)
                if getter not in done:
                    getter.cancel()
                    return
                event = getter.result()
                if event.seq > last:
                    await ctx.send({"id": ctx.request_id, "event": event.to_json()})
                    last = event.seq
        finally:
            closed.cancel()
    finally:
        daemon.hub.unsubscribe(subscription)


async def _session_json(store: EventStore, info: SessionInfo, windows: dict[str, int]) -> dict[str, Any]:
    """A session with its source, project and context fill: at most two small queries, and
    none for a session whose kinds show no ``session.meta`` or ``usage`` event."""
    meta = None
    if "session.meta" in info.kinds:
        first = await store.query(EventQuery(session=info.session, kinds=("session.meta",), limit=1))
        meta = first[0].payload if first else None
    fill = None
    if "usage" in info.kinds:
        context = await latest_context(store, info.session, kinds=info.kinds)
        if context.context_tokens is not None:
            fill = context.to_json(context.window(overrides=windows))
    return session_json(info, meta, fill)


@op("sessions.list")
async def sessions_list(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    store, windows = ctx.daemon.store, ctx.daemon.settings.windows
    return {"sessions": [await _session_json(store, s, windows) for s in await store.sessions()]}


@op("sessions.get")
async def sessions_get(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    store = ctx.daemon.store
    info = await store.session(_required(args, "session", str))
    return await _session_json(store, info, ctx.daemon.settings.windows)


def _progress(ctx: Context, args: dict[str, Any]) -> Callable[[int, int], None] | None:
    """A progress callback sending ``{id, progress: {done, total}}`` lines, when asked for."""
    if not _arg(args, "progress", bool, False):
        return None
    loop = asyncio.get_running_loop()

    def progress(done: int, total: int) -> None:
        loop.create_task(ctx.send({"id": ctx.request_id, "progress": {"done": done, "total": total}}))

    return progress


@op("verify")
async def verify(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    session = await _session_name(ctx, args, required=False)
    report = await ctx.daemon.store.verify(session, _progress(ctx, args))
    await asyncio.sleep(0)  # let the last progress line go out before the answer
    return verify_json(report)


@op("stats")
async def stats(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    return stats_json(await ctx.daemon.store.stats())


@op("admin.rebuild")
async def admin_rebuild(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    store = ctx.daemon.store
    return {"sessions": await store.rebuild_projections(), "search_events": await store.rebuild_search_index()}


@op("shutdown")
async def shutdown(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    ctx.daemon.request_stop("shutdown requested by a client")
    return {"stopping": True, "pid": os.getpid()}


def unknown(name: str) -> UsageError:
    return UsageError(f"unknown operation {name!r}", f"known operations: {', '.join(sorted(OPS))}")
