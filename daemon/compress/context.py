"""The working context of a session: what an agent should see now, fitted to a token budget.

The budget is shared out first (``ALLOCATION``): a reserve for the model's answer and one for the
next input are set aside; pinned items (system messages, and the notes that must not be lost:
decisions, constraints, assumptions) get up to their share, the memory's pinned entries up
to its own; the history gets the rest, and whatever the first two did not use. The history is
the summaries of the session's stored compressions with the events they kept (at most
``SUMMARIES_SHARE`` of it), then the events after the last compressed range, newest kept
first. When those do not fit, the compression engine is run on them with the asked policy,
without storing anything: its summary (or, for fifo and window, nothing) stands for the older
events. The document says what was included, what was left out and why, with token counts per
part.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from daemon.agents.model import Agent
from daemon.agents.refs import Refs
from daemon.component import Component
from daemon.compress.service import COMPRESSION, in_context
from daemon.compress.settings import CompressionSettings
from daemon.contract.kinds import NOTE_PREFIX, Kind
from daemon.core import Core
from daemon.memory.pool_service import PoolService
from daemon.memory.service import Entry, Memory
from daemon.redact.settings import RedactionSettings
from store.errors import NotFound, TokaError, UsageError
from store.events import Event

if TYPE_CHECKING:
    from daemon.compress.tokens import Estimator

# Shares of the budget, in this order; the history gets what is left.
ALLOCATION = {"output_reserve": 0.15, "input_reserve": 0.10, "system": 0.15, "memory": 0.10}
# Of the history's share, the most that stored summaries (and the events they kept) may take:
# the newest events matter more than an old range's detail.
SUMMARIES_SHARE = 0.4
PINNED_NOTES = (Kind.NOTE_DECISION, Kind.NOTE_CONSTRAINT, Kind.NOTE_ASSUMPTION)
MIN_BUDGET = 1_000
# How long an assembled context stays in the pool for a repeated request.
CACHE_TTL_S = 300.0
MAX_BUDGET = 10_000_000

Progress = Callable[[int, int], None]


@dataclass
class Item:
    part: str
    role: str
    content: str
    tokens: int
    event: Event | None = None
    label: str = "summary"  # what an item that is not an event is: a summary, a memory entry

    def cited(self) -> dict[str, Any]:
        event = self.event
        where = (
            {"seq": None, "id": None, "kind": self.label}
            if event is None
            else {
                "seq": event.seq,
                "id": event.id,
                "kind": event.kind,
            }
        )
        return {"part": self.part, **where, "tokens": self.tokens}


def render(event: Event) -> tuple[str, str] | None:
    """(role, content) of an event as an agent reads it; None for what is not replayed."""
    payload = event.payload
    if event.kind == Kind.MESSAGE and isinstance(payload.get("text"), str):
        return str(payload.get("role") or "user"), payload["text"]
    if event.kind == Kind.TOOL_CALL:
        call = json.dumps(payload.get("input"), ensure_ascii=False, separators=(",", ":"))
        return "assistant", f"[tool call {payload.get('tool')}] {call}"
    if event.kind == Kind.TOOL_RESULT:
        output = payload.get("output")
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        status = " failed" if payload.get("is_error") is True else ""
        return "user", f"[tool result{status}] {text}"
    if event.kind in (Kind.COMPACTION, Kind.COMPACTION_SUMMARY) and isinstance(payload.get("summary"), str):
        return "user", f"[summary of the earlier conversation] {payload['summary']}"
    if event.kind.startswith(NOTE_PREFIX) and isinstance(payload.get("text"), str):
        why = f" (because: {payload['reason']})" if isinstance(payload.get("reason"), str) else ""
        return "system", f"[{event.kind.removeprefix('note.')}] {payload['text']}{why}"
    return None


def _pinned(event: Event) -> bool:
    return (event.kind == Kind.MESSAGE and event.payload.get("role") == "system") or event.kind in PINNED_NOTES


class ContextAssembler(Component):
    """Answers ``context``: an agent's working context for a budget and a policy, from its own
    events (a subagent's are not its parent's). The same log, budget, policy and memory give the
    same context, so an answer is kept in the memory pool for ``CACHE_TTL_S`` and given again."""

    def __init__(self, core: Core, refs: Refs, memory: Memory, pool: PoolService) -> None:
        self.core = core
        self.refs = refs  # reads the session or agent a request names
        self.memory = memory
        self.pool = pool

    async def context(
        self, agent: Agent, budget: int, policy: str | None, progress: Progress | None = None, raw: bool = False
    ) -> dict[str, Any]:
        """The context; its messages redacted (``redaction.kinds``) unless ``raw``."""
        policy = policy or self.core.settings[CompressionSettings].policy
        kinds = () if raw else self.core.settings[RedactionSettings].kinds
        # The first seq tells a session that was pruned since (its last seq is the same).
        info = await self.core.store.session(agent.session)
        shown = "raw" if raw else "redacted"
        key = f"context/{agent.id}/{info.first_seq}-{info.last_seq}/{budget}/{policy}/{self.memory.changes}/{shown}"
        try:
            cached: dict[str, Any] = json.loads((await self.pool.get(key)).value)
            return cached
        except NotFound:
            pass
        result = await self.assemble(agent, budget, policy, progress, kinds)
        with contextlib.suppress(TokaError):  # larger than the pool holds: nothing to keep
            await self.pool.put(key, json.dumps(result, separators=(",", ":")).encode(), ttl=CACHE_TTL_S)
        return result

    async def assemble(
        self,
        agent: Agent,
        budget: int,
        policy: str,
        progress: Progress | None = None,
        kinds: tuple[str, ...] | None = None,
    ) -> dict[str, Any]:
        """The context, assembled now; ``kinds`` redacted from its texts (``redaction.kinds`` when None)."""
        from daemon.compress.tokens import estimator

        if not MIN_BUDGET <= budget <= MAX_BUDGET:
            raise UsageError(f"the budget must be from {MIN_BUDGET:,} to {MAX_BUDGET:,} tokens, got {budget:,}")
        store = self.core.store
        session = agent.session
        info = await store.session(session)
        events: list[Event] = []
        async for event in store.replay(session):
            if progress is not None and event.seq % 500 == 0:
                progress(event.seq - info.first_seq, info.last_seq - info.first_seq)
            if agent.owns(event):
                events.append(event)
        count = estimator()
        kinds = self.core.settings[RedactionSettings].kinds if kinds is None else kinds
        pinned = self._pinned_memory(agent)
        result = await asyncio.to_thread(_assemble, events, session, budget, policy, count, kinds, pinned)
        return {"session": session, "agent": agent.id} | result

    def _pinned_memory(self, agent: Agent) -> list[Entry]:
        """Pinned entries of the scopes the agent sees: global, its session, its own, its trace."""
        scopes = {"global", f"session:{agent.session}", f"agent:{agent.id}"}
        scopes |= {f"trace:{agent.trace}"} if agent.trace else set()
        return [e for e in self.memory.entries(pinned=True) if e.scope in scopes]


def _assemble(
    events: list[Event],
    session: str,
    budget: int,
    policy: str,
    count: Estimator,
    kinds: tuple[str, ...],
    pinned_memory: list[Entry],
) -> dict[str, Any]:
    from daemon.compress.engine import compress
    from daemon.compress.tokens import event_tokens
    from daemon.redact import redact

    shares = {name: int(budget * share) for name, share in ALLOCATION.items()}
    left_out: list[dict[str, Any]] = []

    def item(part: str, event: Event) -> Item | None:
        shown = render(event)
        if shown is None:
            return None
        return Item(part, shown[0], shown[1], event_tokens(event, count), event)

    def leave(found: Item, reason: str) -> None:
        left_out.append({**found.cited(), "reason": reason})

    compressions = [e for e in events if e.kind == COMPRESSION]
    covered = max((_last_seq(c) for c in compressions), default=0)
    kept = {seq for c in compressions for seq in c.payload.get("kept_seqs") or ()}
    content = [e for e in events if in_context(e)]
    pinned = [i for e in content if _pinned(e) and (i := item("system", e)) is not None]
    system = _fit(pinned, shares["system"], leave, "over the system share")
    remembered = [
        Item(
            "memory",
            "system",
            f"[memory {e.scope} {e.key}] {json.dumps(e.value, ensure_ascii=False)}",
            0,
            None,
            "memory",
        )
        for e in pinned_memory
    ]
    for entry in remembered:
        entry.tokens = count.count(entry.content)
    memory = _fit(remembered, shares["memory"], leave, "over the memory share")
    history_budget = budget - shares["output_reserve"] - shares["input_reserve"]
    history_budget -= sum(i.tokens for i in system) + sum(i.tokens for i in memory)
    summaries = [
        Item("summaries", "user", f"[summary of events {c.payload['first_seq']}-{c.payload['last_seq']}] {text}", 0)
        for c in compressions
        if (text := c.payload.get("summary"))
    ]
    for summary in summaries:
        summary.tokens = count.count(summary.content)
    earlier = [i for e in content if e.seq in kept and not _pinned(e) and (i := item("history", e)) is not None]
    summaries = _fit(summaries + earlier, int(history_budget * SUMMARIES_SHARE), leave, "over the summaries share")
    history_budget -= sum(i.tokens for i in summaries)
    newest = [i for e in content if e.seq > covered and not _pinned(e) and (i := item("history", e)) is not None]
    fitted_by = None
    if sum(i.tokens for i in newest) > history_budget and newest:
        result = compress(
            [i.event for i in newest if i.event is not None],
            policy=policy,
            target_tokens=max(history_budget, 0),
            tokens=lambda event: event_tokens(event, count),
            redact=lambda text: redact(text, kinds).text,
        )
        fitted_by = result.to_json()
        if result.last_seq is not None:
            last, keep = result.last_seq, set(result.kept_seqs)
            for found in newest:
                if found.event is not None and found.event.seq <= last and found.event.seq not in keep:
                    leave(found, f"older than what fits: {policy} left it out")
            newest = [i for i in newest if i.event is not None and (i.event.seq > last or i.event.seq in keep)]
            if policy in ("summarize", "importance") and result.summary:
                note = Item("history", "user", f"[summary of earlier events] {result.summary}", 0)
                note.tokens = count.count(note.content)
                newest.insert(0, note)
    history = _fit_newest(newest, history_budget, leave)
    parts = {"system": system, "memory": memory, "summaries": summaries, "history": history}
    included = [i for part in parts.values() for i in part]
    used = sum(i.tokens for i in included)
    return {
        "session": session,
        "budget": budget,
        "policy": policy,
        "estimator": count.name,
        "allocation": shares | {"history": budget - sum(shares.values())},
        "parts": {name: {"tokens": sum(i.tokens for i in p), "items": len(p)} for name, p in parts.items()},
        "tokens": used,
        "compressions": [c.id for c in compressions],
        "fitted_by": fitted_by,
        "included": [i.cited() for i in included],
        "left_out": left_out,
        **_redacted_messages(included, kinds),
    }


def _redacted_messages(included: list[Item], kinds: tuple[str, ...]) -> dict[str, Any]:
    """The messages of the items, ``kinds`` redacted from each, and what was: the context is
    handed to a model (docs/redaction.md). Summaries come redacted already, by the compression."""
    from daemon.redact import redact

    counts: dict[str, int] = {}
    messages = []
    for found in included:
        redacted = redact(found.content, kinds)
        messages.append({"role": found.role, "content": redacted.text})
        for kind, count in redacted.counts.items():
            counts[kind] = counts.get(kind, 0) + count
    return {"messages": messages, "redaction": {"raw": not kinds, "kinds": list(kinds), "counts": counts}}


def _last_seq(compression: Event) -> int:
    last = compression.payload.get("last_seq")
    return last if isinstance(last, int) else 0


def _fit(items: list[Item], budget: int, leave: Callable[[Item, str], None], reason: str) -> list[Item]:
    """Items in order while they fit; the others are left out."""
    kept: list[Item] = []
    used = 0
    for found in items:
        if used + found.tokens <= budget:
            kept.append(found)
            used += found.tokens
        else:
            leave(found, reason)
    return kept


def _fit_newest(items: list[Item], budget: int, leave: Callable[[Item, str], None]) -> list[Item]:
    """The newest items that fit, in log order: from the first that does not, everything older
    is left out, so the history has no holes."""
    kept: list[Item] = []
    used = 0
    full = False
    for found in reversed(items):
        full = full or used + found.tokens > budget
        if full:
            leave(found, "over the history share")
        else:
            kept.append(found)
            used += found.tokens
    return kept[::-1]
