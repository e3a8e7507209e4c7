"""The handoff document and the fold that builds it from a session's events.

A handoff is read when an agent's context is nearly full, so it is built on the hot path of a
handoff and must cost a small fraction of reading the session back. :class:`HandoffBuilder` is
therefore a fold: :meth:`HandoffBuilder.add` looks at one event, dispatching on its kind through
a dict, and keeps only what the document will show (counters per tool, the latest to-do list,
the last few errors, references to texts that are cut down once, at the end); nothing is copied
per event and nothing grows with the session except what is capped below.
:meth:`HandoffBuilder.finish` turns that state into a frozen :class:`Handoff`.

What each section is built from (docs/handoffs.md says the same for readers):

- original request: the first user request of the trace. The caller passes it in (see
  :func:`first_request`, run over the trace's first session); without one, the first user
  request of this session.
- task: the latest user request, the agent's latest message, the session state.
- decisions and rejected alternatives: ``note.decision`` and ``note.rejected`` events
  (payload ``{text, reason?}``); assumptions, constraints and dependencies likewise from
  ``note.assumption``, ``note.constraint`` and ``note.dependency``.
- files: the agent's own file-writing tool calls (Claude Code ``Write``, ``Edit``,
  ``MultiEdit``, ``NotebookEdit``; Codex ``apply_patch``, also when run through ``shell`` or
  ``exec_command``), with the outcome of the paired ``tool.result`` (by ``tool_use_id`` or
  ``call_id``).
- to-dos: the latest ``TodoWrite`` (``input.todos``) or Codex ``update_plan``
  (``input.plan``) call.
- work in progress: the in-progress to-dos and the calls still waiting for their result.
- tools: per tool, uses, failures, last use and last error.
- errors: failed tool results and ``error`` events (and ``system`` records of an error
  subtype), each with whether a later call of the same tool succeeded.
- usage: the figures the caller passes (``UsageFigures.to_json()``).
- validity: the head event the document was built from and the document's own digest: the
  blake3 of the canonical JSON of :meth:`Handoff.to_json` without ``footer.digest``.

Events from user messages that an agent harness injects (``meta`` messages, text that opens with
an XML-style tag such as ``<command-name>`` or ``<environment_context>``, Codex's AGENTS.md
preamble) are not requests.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from store.events import Event, canonical_json, digest, format_ts

# Bumped when the JSON shape changes in a way a reader must know about (docs/json.md).
HANDOFF_FORMAT = 1
# How much of a text the document keeps: enough to act on, never a whole payload.
REQUEST_CHARS = 1500
TEXT_CHARS = 400
OUTPUT_CHARS = 300
# Caps that keep the builder's memory flat whatever the session's length.
NOTES_KEPT = 50  # per note kind, the latest
ERRORS_KEPT = 20  # the latest errors; the total is counted
FILES_KEPT = 500  # distinct paths; more are counted, not listed
TOOLS_KEPT = 200  # distinct tool names
PENDING_KEPT = 256  # calls awaiting their result (an interrupted turn leaves some forever)
TODOS_KEPT = 100

NOTE_KINDS = {
    "note.decision": "decisions",
    "note.rejected": "rejected",
    "note.assumption": "assumptions",
    "note.constraint": "constraints",
    "note.dependency": "dependencies",
}
# Claude Code's file-writing tools and the input field naming the file.
PATH_FIELDS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
WRITE_ACTIONS = {"Write": "created", "Edit": "modified", "MultiEdit": "modified", "NotebookEdit": "modified"}
# Codex tools that run a command, which may be apply_patch with the patch inline.
SHELL_TOOLS = frozenset({"shell", "local_shell", "exec_command", "container.exec"})
TODO_TOOLS = frozenset({"TodoWrite", "update_plan"})
ERROR_SUBTYPES = frozenset({"api_error", "error"})
_PATCH_LINE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.MULTILINE)
_PATCH_ACTIONS = {"Add": "created", "Update": "modified", "Delete": "deleted"}
# Harness-injected user text (slash-command output, reminders, Codex's environment context).
_INJECTED = re.compile(r"\s*(?:<|# AGENTS\.md instructions|\[Request interrupted|Caveat: The messages below)")
DONE_STATUSES = frozenset({"completed", "done"})


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit].rstrip()}… [+{len(text) - limit} chars]"


def text_of(value: Any) -> str:
    """A payload field as text: strings as they are, content blocks joined, anything else as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, list):  # content blocks, as some harnesses record tool output
        parts = [b.get("text", "") if isinstance(b, dict) else str(b) for b in value]
        return "\n".join(p for p in parts if isinstance(p, str))
    return json.dumps(value, ensure_ascii=False, default=str)


def _ts(ts: int | None) -> str | None:
    return None if ts is None else format_ts(ts)


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


def _request_of(event: Event) -> Request | None:
    payload = event.payload
    if payload.get("role") != "user" or payload.get("meta") is True:
        return None
    text = payload.get("text")
    if not isinstance(text, str):
        return None
    # A match and isspace, not strip(): no copy of a long prompt per message.
    if not text or text.isspace() or _INJECTED.match(text):
        return None
    return Request(text, event.id, event.ts)


def first_request(events: Iterable[Event]) -> Request | None:
    """The first user request among ``events`` (a trace's first session, in order); stops
    reading at it. Pass the result as ``HandoffBuilder(original_request=...)``."""
    for event in events:
        if event.kind == "message":
            found = _request_of(event)
            if found is not None:
                return replace(found, text=clip(found.text, REQUEST_CHARS))
    return None


def patch_paths(patch: str) -> list[tuple[str, str]]:
    """(path, action) for each file an apply_patch text touches; a moved file counts as the
    old path deleted and the new one created."""
    found: list[tuple[str, str]] = []
    for match in _PATCH_LINE.finditer(patch):
        verb, path, moved = match.groups()
        if moved is not None:
            if found:
                found[-1] = (found[-1][0], "deleted")
            found.append((moved, "created"))
        else:
            found.append((path, _PATCH_ACTIONS[verb]))
    return found


def _shell_patch(call_input: Any) -> str | None:
    """The patch text of a shell call that runs apply_patch, if it is one."""
    command = call_input.get("command", call_input.get("cmd")) if isinstance(call_input, dict) else call_input
    if isinstance(command, list):
        command = "\n".join(c for c in command if isinstance(c, str))
    if isinstance(command, str) and "*** Begin Patch" in command and "apply_patch" in command:
        return command
    return None


def _summary(tool: str, call_input: Any) -> str:
    """One line saying what a call was asked to do."""
    if isinstance(call_input, dict):
        for name in ("file_path", "notebook_path", "command", "cmd", "pattern", "path", "url", "description"):
            value = call_input.get(name)
            if value:
                return clip(text_of(value) if not isinstance(value, list) else " ".join(map(str, value)), 160)
        return ""
    if isinstance(call_input, str):
        return clip(call_input.split("\n", 1)[0], 160)
    return ""


def _todos(tool: str, call_input: Any) -> list[Todo] | None:
    if not isinstance(call_input, dict):
        return None  # arguments that did not parse, or were redacted
    items = call_input.get("todos" if tool == "TodoWrite" else "plan")
    if not isinstance(items, list):
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


@dataclass(slots=True)
class _Call:
    tool: str
    call_id: str
    call_input: Any
    event: str
    ts: int
    writes: list[tuple[str, str]] | None  # (path, action) for file-writing calls


@dataclass(slots=True)
class _File:
    action: str | None  # None until a write succeeds
    attempted: str
    tool: str
    writes: int = 0
    failed: int = 0
    ok: bool | None = None
    event: str = ""
    ts: int = 0


@dataclass(slots=True)
class _Tool:
    uses: int = 0
    failures: int = 0
    last_event: str = ""
    last_ts: int = 0
    last_ok: int = -1  # position of the latest successful result
    last_error: tuple[str, str | None, str, int, int] | None = None  # text, summary, event, ts, position


def _net(before: str | None, now: str) -> str:
    """The net effect of a write ``now`` on a file whose effect so far is ``before``."""
    if before is None or now == "deleted":
        return now
    if before == "deleted":
        return "created" if now == "created" else "modified"
    return "created" if before == "created" else "modified"


class HandoffBuilder:
    """Fold a session's events, in log order, into a :class:`Handoff`.

    ``original_request``: the first request of the trace, when this session is not the trace's
    first (see :func:`first_request`); without it, this session's first request is used.
    """

    def __init__(self, original_request: Request | None = None) -> None:
        self.original_request = original_request
        self._first: Event | None = None
        self._request: Event | None = None
        self._status: Event | None = None
        self._notes: dict[str, deque[Event]] = {kind: deque(maxlen=NOTES_KEPT) for kind in NOTE_KINDS}
        self._files: dict[str, _File] = {}
        self._files_omitted: set[str] = set()
        self._todos: tuple[str, dict[str, Any], str] | None = None  # tool, input, event id
        self._pending: dict[str, _Call] = {}
        self._tools: dict[str, _Tool] = {}
        self._errors: deque[tuple[str | None, str, str | None, str, int, int]] = deque(maxlen=ERRORS_KEPT)
        self._error_count = 0
        self._count = 0
        self._head: Event | None = None
        self._dispatch: dict[str, Callable[[Event], None]] = {
            "message": self._message,
            "tool.call": self._call,
            "tool.result": self._result,
            "error": self._error,
            "system": self._system,
        }
        for kind in NOTE_KINDS:
            self._dispatch[kind] = self._note

    def add(self, event: Event) -> None:
        """Take one event into account; events must come in log order."""
        self._count += 1
        self._head = event
        handler = self._dispatch.get(event.kind)
        if handler is not None:
            handler(event)

    def add_all(self, events: Iterable[Event]) -> HandoffBuilder:
        for event in events:
            self.add(event)
        return self

    # -- one method per kind ------------------------------------------------------------------

    def _message(self, event: Event) -> None:
        role = event.payload.get("role")
        if role == "assistant":
            text = event.payload.get("text")
            if isinstance(text, str) and text and not text.isspace():
                self._status = event
        elif role == "user" and _request_of(event) is not None:
            if self._first is None:
                self._first = event
            self._request = event

    def _note(self, event: Event) -> None:
        if isinstance(event.payload.get("text"), str):
            self._notes[event.kind].append(event)

    def _call(self, event: Event) -> None:
        payload = event.payload
        tool = payload.get("tool")
        if not isinstance(tool, str):
            return
        call_id = payload.get("tool_use_id", payload.get("call_id"))
        call_input = payload.get("input")
        state = self._tools.get(tool)
        if state is None and len(self._tools) < TOOLS_KEPT:
            state = self._tools[tool] = _Tool()
        if state is not None:
            state.uses += 1
            state.last_event = event.id
            state.last_ts = event.ts
        # Read at the end: only the latest list is shown. A list that cannot be read (arguments
        # that did not parse, or were redacted) leaves the previous one standing.
        if (
            tool in TODO_TOOLS
            and isinstance(call_input, dict)
            and isinstance(call_input.get("todos" if tool == "TodoWrite" else "plan"), list)
        ):
            self._todos = (tool, call_input, event.id)
        writes: list[tuple[str, str]] | None = None
        field_name = PATH_FIELDS.get(tool)
        if field_name is not None:
            path = call_input.get(field_name) if isinstance(call_input, dict) else None
            if isinstance(path, str) and path:
                writes = [(path, WRITE_ACTIONS[tool])]
        elif tool == "apply_patch":
            patch = call_input if isinstance(call_input, str) else _shell_patch(call_input)
            writes = patch_paths(patch) if patch else []
        elif tool in SHELL_TOOLS:
            patch = _shell_patch(call_input)
            if patch is not None:
                writes = patch_paths(patch)
        if writes:
            for path, action in writes:
                self._touch(path, action, tool, event)
        if isinstance(call_id, str):
            if len(self._pending) >= PENDING_KEPT:
                del self._pending[next(iter(self._pending))]
            self._pending[call_id] = _Call(tool, call_id, call_input, event.id, event.ts, writes)

    def _touch(self, path: str, action: str, tool: str, event: Event) -> None:
        entry = self._files.get(path)
        if entry is None:
            if len(self._files) >= FILES_KEPT:
                if len(self._files_omitted) < FILES_KEPT:  # counted up to a cap, like the rest
                    self._files_omitted.add(path)
                return
            entry = self._files[path] = _File(None, action, tool)
        entry.attempted = action
        entry.tool = tool
        entry.writes += 1
        entry.ok = None
        entry.event = event.id
        entry.ts = event.ts

    def _result(self, event: Event) -> None:
        payload = event.payload
        call_id = payload.get("tool_use_id", payload.get("call_id"))
        call = self._pending.pop(call_id, None) if isinstance(call_id, str) else None
        failed = payload.get("is_error") is True or payload.get("ok") is False
        if call is None:
            if failed:
                self._record_error(None, text_of(payload.get("output")), None, event)
            return
        state = self._tools.get(call.tool)
        if call.writes:
            for path, action in call.writes:
                entry = self._files.get(path)
                if entry is None:
                    continue
                entry.ok = not failed
                if failed:
                    entry.failed += 1
                else:
                    entry.action = _net(entry.action, action)
        if failed:
            text = text_of(payload.get("output"))
            summary = _summary(call.tool, call.call_input)
            self._record_error(call.tool, text, summary, event)
            if state is not None:
                state.failures += 1
                state.last_error = (text, summary, event.id, event.ts, self._count)
        elif state is not None:
            state.last_ok = self._count

    def _record_error(self, tool: str | None, text: str, summary: str | None, event: Event) -> None:
        self._error_count += 1
        # Only the kept errors are cut down; the text of the rest is never touched.
        self._errors.append((tool, text, summary, event.id, event.ts, self._count))

    def _error(self, event: Event) -> None:
        payload = event.payload
        text = payload.get("text", payload.get("message", payload.get("error")))
        tool = payload.get("tool")
        self._record_error(tool if isinstance(tool, str) else None, text_of(text), None, event)

    def _system(self, event: Event) -> None:
        if event.payload.get("subtype") in ERROR_SUBTYPES:
            payload = event.payload
            detail = payload.get("content") or payload.get("detail")
            self._record_error(None, text_of(detail), None, event)

    # -- the document ---------------------------------------------------------------------------

    def finish(self, subject: Subject, usage: Mapping[str, Any] | None = None) -> Handoff:
        """The document for ``subject``; ``usage`` is the session's usage figures
        (``daemon.agents.usage.UsageFigures.to_json()``), or None when there are none."""

        def cite(event: Event | None, limit: int) -> Request | None:
            if event is None:
                return None
            return Request(clip(event.payload["text"], limit), event.id, event.ts)

        def notes(kind: str) -> tuple[Note, ...]:
            return tuple(
                Note(
                    clip(e.payload["text"], TEXT_CHARS),
                    clip(e.payload["reason"], TEXT_CHARS) if isinstance(e.payload.get("reason"), str) else None,
                    e.id,
                    e.ts,
                )
                for e in self._notes[kind]
            )

        original = self.original_request or cite(self._first, REQUEST_CHARS)
        files = tuple(
            FileChange(
                path,
                entry.action or entry.attempted,
                entry.tool,
                entry.writes,
                entry.failed,
                entry.ok,
                entry.event,
                entry.ts,
            )
            for path, entry in self._files.items()
        )
        todos: tuple[Todo, ...] = ()
        todos_event = None
        if self._todos is not None:
            tool, call_input, todos_event = self._todos
            todos = tuple(_todos(tool, call_input) or ())
        pending = tuple(
            PendingCall(c.tool, c.call_id, _summary(c.tool, c.call_input), c.event, c.ts)
            for c in self._pending.values()
        )
        tools = tuple(
            ToolState(
                name,
                t.uses,
                t.failures,
                t.last_event,
                t.last_ts,
                None
                if t.last_error is None
                else ToolError(
                    name,
                    clip(t.last_error[0], OUTPUT_CHARS),
                    t.last_error[1],
                    t.last_error[2],
                    t.last_error[3],
                    t.last_ok > t.last_error[4],
                ),
            )
            for name, t in sorted(self._tools.items())
        )
        errors = tuple(
            ToolError(
                tool,
                clip(text, OUTPUT_CHARS),
                summary,
                event_id,
                ts,
                tool is not None and tool in self._tools and self._tools[tool].last_ok > position,
            )
            for tool, text, summary, event_id, ts, position in self._errors
        )
        done = sum(1 for t in todos if t.status in DONE_STATUSES)
        head = self._head
        document = Handoff(
            subject=subject,
            original_request=original,
            request=cite(self._request, REQUEST_CHARS),
            status=cite(self._status, TEXT_CHARS),
            decisions=notes("note.decision"),
            rejected=notes("note.rejected"),
            assumptions=notes("note.assumption"),
            constraints=notes("note.constraint"),
            dependencies=notes("note.dependency"),
            files=files,
            files_omitted=len(self._files_omitted),
            todos=todos,
            todos_event=todos_event,
            pending=pending,
            tools=tools,
            errors=errors,
            error_count=self._error_count,
            usage=None if usage is None else dict(usage),
            progress=Progress(done, len(todos), subject.state),
            events=self._count,
            head=None if head is None else head.id,
            head_seq=None if head is None else head.seq,
        )
        return replace(document, digest=document_digest(document.to_json()))


def build_handoff(
    events: Iterable[Event],
    subject: Subject,
    usage: Mapping[str, Any] | None = None,
    original_request: Request | None = None,
) -> Handoff:
    """The handoff document of a session's events (in log order): :class:`HandoffBuilder` in
    one call."""
    return HandoffBuilder(original_request=original_request).add_all(events).finish(subject, usage)
