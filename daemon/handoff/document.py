"""The handoff document: what a fresh agent needs to carry on where another stopped.

Frozen dataclasses, one per section; :meth:`Handoff.to_json` is the documented shape
(docs/json.md), and :func:`document_digest` the digest its footer carries. The fold that builds
one from a session's events is :mod:`daemon.handoff.build`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from daemon.transcript.calls import todo_items
from daemon.transcript.text import clip, is_request
from store.events import Event, canonical_json, digest, format_ts

# Bumped when the JSON shape changes in a way a reader must know about (docs/json.md). 2: the
# document is built from its agent's own events, not every event of the session.
HANDOFF_FORMAT = 2
# How much of a text the document keeps: enough to act on, never a whole payload.
REQUEST_CHARS = 1500
TEXT_CHARS = 400
OUTPUT_CHARS = 300
# The items of a to-do list a handoff keeps.
TODOS_KEPT = 100


@dataclass(frozen=True, slots=True)
class Subject:
    """Who hands off. The caller knows these from the agent registry; the log does not."""

    agent: str
    session: str
    type: str | None = None
    role: str | None = None
    version: int = 1
    model: str | None = None
    window: int | None = None
    state: str | None = None
    trace: str | None = None
    predecessor: str | None = None  # the agent this one took over from
    reason: str | None = None  # why it hands off, e.g. CONTEXT_WINDOW_EXHAUSTED

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "type": self.type,
            "role": self.role,
            "version": self.version,
            "model": self.model,
            "window": self.window,
            "state": self.state,
            "session": self.session,
            "trace": self.trace,
            "predecessor": self.predecessor,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class Request:
    """A user request as the document cites it."""

    text: str
    event: str
    ts: int

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "event": self.event, "ts": format_ts(self.ts)}


@dataclass(frozen=True, slots=True)
class Note:
    """A ``note.*`` event: a decision, a rejected alternative, an assumption, ..."""

    text: str
    reason: str | None
    event: str
    ts: int

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "reason": self.reason, "event": self.event, "ts": format_ts(self.ts)}


@dataclass(frozen=True, slots=True)
class FileChange:
    """A file the agent wrote. ``action`` is the net effect over the session (created,
    modified, deleted); ``ok`` is the outcome of the last call that wrote it (None: no result
    yet)."""

    path: str
    action: str
    tool: str
    writes: int
    failed: int
    ok: bool | None
    event: str
    ts: int

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "action": self.action,
            "tool": self.tool,
            "writes": self.writes,
            "failed": self.failed,
            "ok": self.ok,
            "event": self.event,
            "ts": format_ts(self.ts),
        }


@dataclass(frozen=True, slots=True)
class Todo:
    text: str
    status: str
    active_form: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "status": self.status, "active_form": self.active_form}


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A tool call without a result when the document was built."""

    tool: str
    call_id: str
    summary: str
    event: str
    ts: int

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "call_id": self.call_id,
            "summary": self.summary,
            "event": self.event,
            "ts": format_ts(self.ts),
        }


@dataclass(frozen=True, slots=True)
class ToolError:
    """A failed tool result or an ``error`` event. ``recovered``: a later call of the same tool
    succeeded (always False for errors without a tool)."""

    tool: str | None
    text: str
    summary: str | None  # what the failed call was asked to do
    event: str
    ts: int
    recovered: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "text": self.text,
            "summary": self.summary,
            "event": self.event,
            "ts": format_ts(self.ts),
            "recovered": self.recovered,
        }


@dataclass(frozen=True, slots=True)
class ToolState:
    tool: str
    uses: int
    failures: int
    last_event: str
    last_ts: int
    last_error: ToolError | None

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "uses": self.uses,
            "failures": self.failures,
            "last_event": self.last_event,
            "last_ts": format_ts(self.last_ts),
            "last_error": None if self.last_error is None else self.last_error.to_json(),
        }


@dataclass(frozen=True, slots=True)
class Progress:
    done: int
    total: int
    state: str | None

    @property
    def pct(self) -> float | None:
        return round(100 * self.done / self.total, 1) if self.total else None

    def to_json(self) -> dict[str, Any]:
        return {"done": self.done, "total": self.total, "pct": self.pct, "state": self.state}


@dataclass(frozen=True, slots=True)
class Handoff:
    """A built handoff document. ``to_json()`` is the documented shape (docs/json.md)."""

    subject: Subject
    original_request: Request | None
    request: Request | None
    status: Request | None  # the agent's latest message, cited like a request
    decisions: tuple[Note, ...]
    rejected: tuple[Note, ...]
    assumptions: tuple[Note, ...]
    constraints: tuple[Note, ...]
    dependencies: tuple[Note, ...]
    files: tuple[FileChange, ...]
    files_omitted: int
    todos: tuple[Todo, ...]
    todos_event: str | None
    pending: tuple[PendingCall, ...]
    tools: tuple[ToolState, ...]
    errors: tuple[ToolError, ...]
    error_count: int
    usage: dict[str, Any] | None
    progress: Progress
    events: int
    head: str | None
    head_seq: int | None
    digest: str = ""

    @property
    def in_progress(self) -> tuple[Todo, ...]:
        return tuple(t for t in self.todos if t.status == "in_progress")

    def references(self) -> list[dict[str, str]]:
        """Every event the document cites, once, with the section that cites it first."""
        cited: dict[str, str] = {}

        def cite(event: str | None, section: str) -> None:
            if event is not None and event not in cited:
                cited[event] = section

        if self.original_request is not None:
            cite(self.original_request.event, "original_request")
        if self.request is not None:
            cite(self.request.event, "task")
        if self.status is not None:
            cite(self.status.event, "task")
        for name in ("decisions", "rejected", "assumptions", "constraints", "dependencies"):
            for note in getattr(self, name):
                cite(note.event, name)
        for change in self.files:
            cite(change.event, "files")
        cite(self.todos_event, "todos")
        for call in self.pending:
            cite(call.event, "in_progress")
        for tool in self.tools:
            cite(tool.last_event, "tools")
        for error in self.errors:
            cite(error.event, "errors")
        cite(self.head, "footer")
        return [{"event": event, "section": section} for event, section in cited.items()]

    def to_json(self) -> dict[str, Any]:
        def notes(items: tuple[Note, ...]) -> list[dict[str, Any]]:
            return [n.to_json() for n in items]

        return {
            "format": HANDOFF_FORMAT,
            "subject": self.subject.to_json(),
            "original_request": None if self.original_request is None else self.original_request.to_json(),
            "task": {
                "request": None if self.request is None else self.request.to_json(),
                "status": None if self.status is None else self.status.to_json(),
                "state": self.subject.state,
            },
            "decisions": notes(self.decisions),
            "rejected": notes(self.rejected),
            "files": [f.to_json() for f in self.files],
            "files_omitted": self.files_omitted,
            "in_progress": {
                "todos": [t.to_json() for t in self.in_progress],
                "calls": [c.to_json() for c in self.pending],
            },
            "todos": {"event": self.todos_event, "items": [t.to_json() for t in self.todos]},
            "tools": [t.to_json() for t in self.tools],
            "assumptions": notes(self.assumptions),
            "constraints": notes(self.constraints),
            "dependencies": notes(self.dependencies),
            "errors": {"count": self.error_count, "items": [e.to_json() for e in self.errors]},
            "usage": self.usage,
            "progress": self.progress.to_json(),
            "references": self.references(),
            "footer": {"head": self.head, "head_seq": self.head_seq, "events": self.events, "digest": self.digest},
        }


def document_digest(document: Mapping[str, Any]) -> str:
    """The digest a handoff's footer carries: blake3 of the canonical JSON of the document
    (``Handoff.to_json()`` shape) with ``footer.digest`` left out. Recomputing it from a stored
    JSON document verifies the document."""
    footer = {k: v for k, v in document["footer"].items() if k != "digest"}
    return digest(canonical_json({**document, "footer": footer}))


def first_request(events: Iterable[Event]) -> Request | None:
    """The first user request among ``events`` (a trace's first session, in order); stops
    reading at it. Pass the result as ``HandoffBuilder(original_request=...)``."""
    for event in events:
        if is_request(event):
            return Request(clip(event.payload["text"], REQUEST_CHARS), event.id, event.ts)
    return None


def todos_of(tool: str, call_input: Any) -> list[Todo] | None:
    """The to-do list a ``TodoWrite`` or ``update_plan`` call sets, each text cut down."""
    items = todo_items(tool, call_input)
    if items is None:
        return None
    todos: list[Todo] = []
    for item in items[:TODOS_KEPT]:
        if not isinstance(item, dict):
            continue
        text = item.get("content", item.get("step"))
        status = item.get("status")
        if isinstance(text, str):
            active = item.get("activeForm")
            todos.append(
                Todo(
                    clip(text, TEXT_CHARS),
                    status if isinstance(status, str) else "pending",
                    active if isinstance(active, str) else None,
                )
            )
    return todos
