"""Handoffs in the log: built from an agent's session (daemon/handoff/), stored as ``handoff``
events, listed, walked as chains, and checked against the log they were built from.

Every text of the document is redacted (``redaction.kinds``) before it is stored; the kinds
used are stored with it, so ``verify`` rebuilds the same document. A ``handoff`` event belongs
to the session of the agent that hands off, and is not part of
the documents built from that session later: building twice from the same log gives the same
document (and the same event, keyed by its digest). Its payload holds the
trace, the predecessor (that agent's id), the successor (the agent spawned to continue, or
null for a document made by hand), the reason, the document (``Handoff.to_json``) and its two
renders, markdown and the continuation prompt. The handoff's id is the event's id. The latest
handoff of a trace is its active one: the one the trace continues from.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Collection
from dataclasses import fields, is_dataclass, replace
from pathlib import Path
from typing import Any

from daemon.agents.directory import Directory
from daemon.agents.model import HANDOFF, Agent, belongs
from daemon.agents.usage import MAIN_AGENT, session_usage
from daemon.component import Component
from daemon.contract import results
from daemon.contract.policies import NoteKind, choices_of
from daemon.core import Core
from daemon.handoff import Handoff, HandoffBuilder, Request, Subject, document_digest, first_request
from daemon.handoff.render import render_markdown, render_prompt
from daemon.handoff.settings import HandoffSettings
from daemon.ownership import open_private, private_dir
from daemon.redact import redact
from daemon.redact.settings import RedactionSettings
from store.base import EventQuery
from store.errors import NotFound, UnsafePath, UsageError
from store.events import Event, format_ts, parse_new_event, parse_ts

log = logging.getLogger("toka.daemon")

# Events of a trace's first session read to find its original request.
_FIRST_EVENTS = 500
# What `toka note` records: ``note.<kind>`` events, or an ``error`` event.


class Handoffs(Component):
    """Builds, finds and checks the handoffs of the log. Documents are also written as markdown
    under the data dir's handoffs folder when ``handoff.save_markdown`` is on."""

    def __init__(self, core: Core, directory: Directory) -> None:
        self.core = core
        self.directory = directory
        self.markdown_dir = core.paths.handoffs if core.settings[HandoffSettings].save_markdown else None

    async def build(self, agent: Agent, successor: str | None = None, reason: str | None = None) -> Event:
        """Build the handoff document of ``agent`` from its own events in its session's log
        (a subagent's are not its parent's) and store it."""
        store = self.core.store
        builder = HandoffBuilder(original_request=await self._original_request(agent))
        async for event in store.replay(agent.session):
            if event.kind != HANDOFF and agent.owns(event):
                builder.add(event)
        # The main agent is charged with the calls of the subagents it ran (``toka usage``).
        figures = await session_usage(store, agent.session, None if agent.name == MAIN_AGENT else agent.name)
        figures.model = figures.model or agent.model
        window = self.directory.window_of(figures, agent)
        subject = Subject(
            agent=agent.id,
            session=agent.session,
            type=agent.type,
            role=agent.role,
            version=agent.version or 1,
            model=figures.model,
            window=window[0],
            state=agent.state,
            trace=agent.trace or agent.session,
            predecessor=agent.predecessor,
            reason=reason,
        )
        kinds = self.core.settings[RedactionSettings].kinds
        document = redacted(builder.finish(subject, figures.to_json(window, agent.thresholds)), kinds)
        payload = {
            "trace": subject.trace,
            "predecessor": agent.id,
            "successor": successor,
            "reason": reason,
            "document": document.to_json(),
            "redacted": list(kinds),
            "markdown": render_markdown(document),
            "prompt": render_prompt(document),
        }
        stored = {
            "session": agent.session,
            "agent": agent.name,
            "kind": HANDOFF,
            "key": f"handoff:{document.digest[:32]}",
            "payload": payload,
        }
        [result] = await self.core.append([parse_new_event(stored)])
        if self.markdown_dir is not None:
            _write_markdown(self.markdown_dir, result.event)
        return result.event

    async def note(self, agent: Agent, kind: str, text: str, reason: str | None = None) -> results.Noted:
        """Record a note of ``agent``'s that its next handoff document lists: ``note.<kind>``, or
        an ``error`` event for kind ``error``."""
        if kind not in choices_of(NoteKind):
            raise UsageError(f"unknown note kind {kind!r}", f"use one of: {', '.join(NoteKind)}")
        if not text.strip():
            raise UsageError("the note is empty", "say what was decided, assumed, rejected, ...")
        event_kind = NoteKind(kind).event_kind
        payload = {"text": text} | ({"reason": reason} if reason else {})
        event = {"session": agent.session, "agent": agent.name, "kind": event_kind, "payload": payload}
        [result] = await self.core.append([parse_new_event(event)])
        stored = result.event
        return {
            "session": stored.session,
            "agent": agent.id,
            "kind": event_kind,
            "seq": stored.seq,
            "id": stored.id,
            "created": result.created,
        }

    async def _original_request(self, agent: Agent) -> Request | None:
        """The first request of the trace's first session (None: the session's own first one)."""
        if agent.trace is None:
            return None
        first = min(
            (a for a in self.directory.agents if a.trace == agent.trace and a.spawned),
            key=lambda a: a.version or 0,
            default=None,
        )
        if first is None or first.session == agent.session:
            return None
        events = await self.core.store.query(EventQuery(session=first.session, limit=_FIRST_EVENTS))
        return first_request([event for event in events if first.owns(event)])

    async def all(self) -> list[Event]:
        return [event async for event in self.core.store.scan(EventQuery(kinds=(HANDOFF,)))]

    async def get(self, ref: str) -> Event:
        try:
            event = await self.core.store.get(ref)
        except NotFound:
            raise NotFound(f"no handoff matches {ref!r}", "list them with `toka handoff list`") from None
        if event.kind != HANDOFF:
            raise NotFound(f"{ref!r} is a {event.kind} event, not a handoff", "list them with `toka handoff list`")
        return event

    async def verify(self, event: Event) -> dict[str, Any]:
        """Whether the stored document is intact and still what its session's log gives."""
        document = event.payload.get("document") or {}
        footer = document.get("footer") or {}
        problems: list[str] = []
        if document_digest(document) != footer.get("digest"):
            problems.append("the document does not match its own digest: it was changed after it was built")
        head_seq = footer.get("head_seq")
        rebuilt = None
        if isinstance(head_seq, int):
            try:
                head = await self.core.store.get_by_seq(head_seq)
            except NotFound:
                head = None
            if head is None or head.id != footer.get("head"):
                problems.append(f"the head event it was built from (seq {head_seq}) is not in the log as it was")
            else:
                rebuilt = await self._rebuild(event, document, head_seq)
                if rebuilt != footer.get("digest"):
                    problems.append("the session's log up to the head no longer gives this document")
        return {
            "id": event.id,
            "ok": not problems,
            "digest": footer.get("digest"),
            "rebuilt": rebuilt,
            "problems": problems,
        }

    async def _rebuild(self, event: Event, document: dict[str, Any], head_seq: int) -> str:
        """The digest of the document built again from the log up to ``head_seq``, with the same
        subject, usage and original request as the stored one."""
        subject = Subject(**{k: v for k, v in document["subject"].items() if k in Subject.__dataclass_fields__})
        original = document.get("original_request")
        request = None if original is None else Request(original["text"], original["event"], parse_ts(original["ts"]))
        builder = HandoffBuilder(original_request=request)
        # Documents before format 2 were built from every event of the session.
        whole_session = document.get("format", 1) < 2 or event.agent is None
        async for item in self.core.store.replay(event.session, to_seq=head_seq):
            if item.kind != HANDOFF and (whole_session or belongs(item, event.session, str(event.agent))):
                builder.add(item)
        kinds = event.payload.get("redacted") or ()
        return redacted(builder.finish(subject, document.get("usage")), kinds).digest


def _write_markdown(folder: Path, event: Event) -> None:
    """``<folder>/<trace>/<id>.md``; a failure is logged, the handoff stands."""
    trace = str(event.payload["trace"]).replace("/", "_").replace("\\", "_").lstrip(".") or "_"
    target = folder / trace / f"{event.id[:16]}.md"
    try:
        private_dir(folder)
        private_dir(target.parent)
        with open(open_private(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "w", encoding="utf-8") as out:
            out.write(event.payload["markdown"])
    except (OSError, UnsafePath) as exc:
        log.warning("handoff %s not written to %s: %s", event.id[:12], target, exc)


def summary(event: Event, active: bool) -> dict[str, Any]:
    """A handoff without its document: who, when, why, how full, how far along."""
    payload = event.payload
    document = payload.get("document") or {}
    usage = document.get("usage") or {}
    return {
        "id": event.id,
        "seq": event.seq,
        "ts": format_ts(event.ts),
        "session": event.session,
        "trace": payload.get("trace"),
        "predecessor": payload.get("predecessor"),
        "successor": payload.get("successor"),
        "reason": payload.get("reason"),
        "fill_pct": usage.get("fill_pct"),
        "progress": document.get("progress"),
        "active": active,
    }


def summaries(events: list[Event]) -> list[dict[str, Any]]:
    """Each handoff's summary, the latest of each trace marked active."""
    latest = {e.payload.get("trace"): e.id for e in events}
    return [summary(e, latest[e.payload.get("trace")] == e.id) for e in events]


def stats(events: list[Event]) -> dict[str, Any]:
    rows = summaries(events)
    fills = [r["fill_pct"] for r in rows if isinstance(r["fill_pct"], (int, float))]
    done = [
        r["progress"]["done"] / r["progress"]["total"]
        for r in rows
        if isinstance(r["progress"], dict) and r["progress"].get("total")
    ]
    return {
        "handoffs": len(rows),
        "traces": len({r["trace"] for r in rows}),
        "by_reason": dict(Counter(r["reason"] or "manual" for r in rows)),
        "average_fill_pct": round(sum(fills) / len(fills), 1) if fills else None,
        "average_completion_pct": round(100 * sum(done) / len(done), 1) if done else None,
    }


def redacted(document: Handoff, kinds: Collection[str]) -> Handoff:
    """The document with personal data and secrets redacted from every text in it (ids and
    digests are hex and stay as they are), and its digest computed again."""
    if not kinds:
        return document
    clean: Handoff = _redact_value(document, kinds)
    return replace(clean, digest=document_digest(clean.to_json()))


def _redact_value(value: Any, kinds: Collection[str]) -> Any:
    if isinstance(value, str):
        return redact(value, kinds).text
    if isinstance(value, tuple):
        return tuple(_redact_value(item, kinds) for item in value)
    if is_dataclass(value) and not isinstance(value, type):
        changed = {f.name: _redact_value(getattr(value, f.name), kinds) for f in fields(value) if f.init}
        return replace(value, **changed)
    return value
