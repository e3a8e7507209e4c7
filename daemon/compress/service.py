"""Compressing a session in the log: take the events after its last compressed range, let the
engine (daemon/compress/) decide what replaces the older ones, and store that as a
``compression`` event. Nothing is deleted or changed: the event names the range (first and last
seq), the summary, what was kept, the figures and the summarizer used.

The target is a share of the agent's window (``compression.target_pct``, 37.5% by default);
a session is compressed again only once ``compression.min_messages`` new messages arrived and
``compression.min_interval_s`` passed (``force`` skips both). The daemon compresses by itself
when a spawned agent's ``auto_compress`` policy says so and its fill reaches
``compression.trigger_pct``; the agent's state then follows the compressed size.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from daemon.agents.directory import Directory
from daemon.agents.model import Agent
from daemon.component import Component
from daemon.compress.settings import CompressionSettings
from daemon.contract.kinds import NOTE_PREFIX, Kind
from daemon.contract.policies import CompressionPolicy, choices_of
from daemon.core import Core
from daemon.redact.settings import RedactionSettings
from store.base import EventQuery, EventStore
from store.errors import Conflict, UsageError
from store.events import Event, format_ts, parse_new_event

log = logging.getLogger("toka.daemon")

COMPRESSION = Kind.COMPRESSION
# The kinds an agent's context is made of (with note.*); everything else (usage, lifecycle, raw
# records, hooks, thinking, which providers do not carry from one turn to the next, ...) is about
# the session, not in it.
CONTEXT_KINDS = frozenset({Kind.MESSAGE, Kind.TOOL_CALL, Kind.TOOL_RESULT, Kind.COMPACTION, Kind.COMPACTION_SUMMARY})

Progress = Callable[[int, int], None]


def in_context(event: Event) -> bool:
    return event.kind in CONTEXT_KINDS or event.kind.startswith(NOTE_PREFIX)


@dataclass(frozen=True)
class Compress:
    """One request to compress: what ``toka compress`` and the automatic trigger ask for."""

    policy: str
    target_pct: float
    dry_run: bool = False
    force: bool = False
    trigger: str = "manual"


async def last_compression(store: EventStore, agent: Agent) -> Event | None:
    """The agent's latest compression (each agent of a session is compressed on its own)."""
    query = EventQuery(session=agent.session, kinds=(COMPRESSION,), order="desc")
    return next((event for event in await store.query(query) if agent.owns(event)), None)


def compressed_to(compression: Event | None) -> int:
    """The last seq a compression covered (0: none)."""
    if compression is None:
        return 0
    last = compression.payload.get("last_seq")
    return last if isinstance(last, int) else 0


async def context_events(store: EventStore, agent: Agent, after_seq: int, progress: Progress | None) -> list[Event]:
    """The agent's events after ``after_seq`` that are part of its context (a subagent's are not)."""
    info = await store.session(agent.session)
    events: list[Event] = []
    async for event in store.replay(agent.session):
        if progress is not None and event.seq % 500 == 0:
            progress(event.seq - info.first_seq, info.last_seq - info.first_seq)
        if event.seq > after_seq and in_context(event) and agent.owns(event):
            events.append(event)
    return events


class Compressor(Component):
    """Runs compressions for the daemon, one at a time. ``evaluated(seq)`` waits until the
    lifecycle has taken in the log up to ``seq``: a compression is answered once the agent's
    state followed it."""

    def __init__(self, core: Core, directory: Directory, evaluated: Callable[[int], Awaitable[None]]) -> None:
        self.core = core
        self.directory = directory
        self._evaluated = evaluated
        self._lock = asyncio.Lock()
        self._auto: set[str] = set()  # sessions with an automatic compression under way

    async def run(self, agent: Agent, request: Compress, progress: Progress | None = None) -> dict[str, Any]:
        if request.policy not in choices_of(CompressionPolicy):
            raise UsageError(f"unknown policy {request.policy!r}", f"policies: {', '.join(CompressionPolicy)}")
        if not 0 < request.target_pct < 100:
            raise UsageError(f"the target must be a percentage between 0 and 100, got {request.target_pct!r}")
        async with self._lock:
            return await self._run(agent, request, progress)

    async def _run(self, agent: Agent, request: Compress, progress: Progress | None) -> dict[str, Any]:
        from daemon.compress.engine import compress
        from daemon.compress.tokens import estimator, event_tokens
        from daemon.redact import redact

        store, settings = self.core.store, self.core.settings[CompressionSettings]
        kinds = self.core.settings[RedactionSettings].kinds
        previous = await last_compression(store, agent)
        events = await context_events(store, agent, compressed_to(previous), progress)
        if not request.force:
            self._check_rate(previous, events)
        window, _ = self.directory.window(agent)
        target = round(window * request.target_pct / 100)
        count = estimator()
        external = settings.summarizer if settings.summarizer != "builtin" else None
        result = await asyncio.to_thread(
            compress,
            events,
            policy=request.policy,
            target_tokens=target,
            tokens=lambda event: event_tokens(event, count),
            redact=lambda text: redact(text, kinds).text,
            summarizer=external,
            timeout_s=settings.summarizer_timeout,
        )
        payload = result.to_json() | {
            "agent": agent.id,
            "target_pct": request.target_pct,
            "target_tokens": target,
            "window": window,
            "trigger": request.trigger,
            "estimator": count.name,
        }
        if request.dry_run or not result.events_in_range:
            return {"stored": False, "id": None, "seq": None, **payload}
        stored = {"session": agent.session, "agent": agent.name, "kind": COMPRESSION, "payload": payload}
        [appended] = await self.core.append([parse_new_event(stored)])
        await self._evaluated(appended.event.seq)  # answered once the agent's state followed
        return {"stored": True, "id": appended.event.id, "seq": appended.event.seq, **payload}

    def _check_rate(self, previous: Event | None, events: list[Event]) -> None:
        if previous is None:
            return
        settings = self.core.settings[CompressionSettings]
        waited = self.core.clock() - previous.ts / 1_000_000
        if waited < settings.min_interval_s:
            raise Conflict(
                f"the session was compressed {waited / 60:.0f} min ago, at {format_ts(previous.ts)};"
                f" compression.min_interval_s asks for {settings.min_interval_s / 60:.0f} min",
                "add --force to compress now",
            )
        messages = sum(1 for e in events if e.kind == Kind.MESSAGE and e.seq > previous.seq)
        if messages < settings.min_messages:
            raise Conflict(
                f"{messages} new messages since the last compression; compression.min_messages asks for"
                f" {settings.min_messages}",
                "add --force to compress now",
            )

    def consider(self, agent: Agent, fill_pct: float) -> None:
        """At the trigger, start an automatic compression for an agent whose policy asks for one."""
        settings = self.core.settings[CompressionSettings]
        if agent.auto_compress in (None, "off") or fill_pct < settings.trigger_pct or agent.session in self._auto:
            return
        self._auto.add(agent.session)
        request = Compress(agent.auto_compress, settings.target_pct, trigger="auto")
        task = asyncio.get_running_loop().create_task(self._auto_run(agent, request))
        task.add_done_callback(lambda _: self._auto.discard(agent.session))

    async def _auto_run(self, agent: Agent, request: Compress) -> None:
        try:
            await self.run(agent, request)
        except Conflict:
            pass  # rate-limited: the next usage over the trigger tries again
        except Exception:
            log.exception("automatic compression of %s failed", agent.session)
