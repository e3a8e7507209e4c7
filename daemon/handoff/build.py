"""The fold that builds a handoff document (:mod:`daemon.handoff.document`) from a session's events.

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
- task: the latest user request (a user message, or the prompt a UserPromptSubmit hook saw),
  the agent's latest message, the session state.
- decisions and rejected alternatives: ``note.decision`` and ``note.rejected`` events
  (payload ``{text, reason?}``); assumptions, constraints and dependencies likewise from
  ``note.assumption``, ``note.constraint`` and ``note.dependency``.
- files: the agent's own file-writing tool calls (Claude Code ``Write``, ``Edit``,
  ``MultiEdit``, ``NotebookEdit``; Codex ``apply_patch``, also when run through ``shell`` or
  ``exec_command``), with the outcome of the paired ``tool.result`` (by ``tool_use_id`` or
  ``call_id``).
- to-dos: the latest ``TodoWrite`` (``input.todos``) or Codex ``update_plan``
  (``input.plan``) call, and after them the ``note.todo`` events it does not name (pending).
- work in progress: the in-progress to-dos and the calls still waiting for their result.
- tools: per tool, uses, failures, last use and last error.
- errors: failed tool results and ``error`` events (and ``system`` records of an error
  subtype), each with whether a later call of the same tool succeeded.
- usage: the figures the caller passes (``UsageFigures.to_json()``).
- validity: the head event the document was built from and the document's own digest: the
  blake3 of the canonical JSON of :meth:`Handoff.to_json` without ``footer.digest``.

User messages that an agent harness injects are not requests (see :mod:`daemon.transcript.text`);
which tool calls write files or set the to-do list is :mod:`daemon.transcript.calls`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from daemon.contract.kinds import Kind
from daemon.handoff.document import (
    OUTPUT_CHARS,
    REQUEST_CHARS,
    TEXT_CHARS,
    FileChange,
    Handoff,
    Note,
    PendingCall,
    Progress,
    Request,
    Subject,
    Todo,
    ToolError,
    ToolState,
    document_digest,
    todos_of,
)
from daemon.transcript.calls import TODO_TOOLS, call_summary, todo_items, written_files
from daemon.transcript.text import clip, is_request, text_of
from store.events import Event

# Caps that keep the builder's memory flat whatever the session's length.
NOTES_KEPT = 50  # per note kind, the latest
ERRORS_KEPT = 20  # the latest errors; the total is counted
FILES_KEPT = 500  # distinct paths; more are counted, not listed
TOOLS_KEPT = 200  # distinct tool names
PENDING_KEPT = 256  # calls awaiting their result (an interrupted turn leaves some forever)

# The notes listed by kind (to-dos and errors have sections of their own), and the section of each.
NOTE_KINDS = {
    Kind.NOTE_DECISION: "decisions",
    Kind.NOTE_REJECTED: "rejected",
    Kind.NOTE_ASSUMPTION: "assumptions",
    Kind.NOTE_CONSTRAINT: "constraints",
    Kind.NOTE_DEPENDENCY: "dependencies",
}
ERROR_SUBTYPES = frozenset({"api_error", "error"})
DONE_STATUSES = frozenset({"completed", "done"})


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
        self._todos: tuple[str, Any, str] | None = None  # tool, input, event id
        self._noted_todos: deque[str] = deque(maxlen=NOTES_KEPT)  # `toka note todo`: open to-dos
        self._pending: dict[str, _Call] = {}
        self._tools: dict[str, _Tool] = {}
        self._errors: deque[tuple[str | None, str, str | None, str, int, int]] = deque(maxlen=ERRORS_KEPT)
        self._error_count = 0
        self._count = 0
        self._head: Event | None = None
        self._dispatch: dict[str, Callable[[Event], None]] = {
            Kind.MESSAGE: self._message,
            Kind.TOOL_CALL: self._call,
            Kind.TOOL_RESULT: self._result,
            Kind.ERROR: self._error,
            Kind.SYSTEM: self._system,
        }
        for kind in NOTE_KINDS:
            self._dispatch[kind] = self._note
        self._dispatch[Kind.NOTE_TODO] = self._noted_todo
        self._dispatch[Kind.HOOK_USER_PROMPT_SUBMIT] = self._prompt

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
        elif is_request(event):
            if self._first is None:
                self._first = event
            self._request = event

    def _note(self, event: Event) -> None:
        if isinstance(event.payload.get("text"), str):
            self._notes[event.kind].append(event)

    def _prompt(self, event: Event) -> None:
        """A prompt as a UserPromptSubmit hook saw it: the request of a session recorded by its
        hooks alone (with its transcript too, the same text as the user message beside it)."""
        text = event.payload.get("prompt")
        if isinstance(text, str) and text.strip() and not text.lstrip().startswith("/"):
            if self._first is None:
                self._first = event
            self._request = event

    def _noted_todo(self, event: Event) -> None:
        text = event.payload.get("text")
        if isinstance(text, str) and text.strip():
            self._noted_todos.append(clip(text, TEXT_CHARS))

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
        if tool in TODO_TOOLS and todo_items(tool, call_input) is not None:
            self._todos = (tool, call_input, event.id)
        writes = written_files(tool, call_input)
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
            summary = call_summary(call.call_input)
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
            text = event.payload["prompt" if event.kind == Kind.HOOK_USER_PROMPT_SUBMIT else "text"]
            return Request(clip(text, limit), event.id, event.ts)

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
            todos = tuple(todos_of(tool, call_input) or ())
        # A to-do noted by hand stays open until a to-do list of the agent's names it.
        listed = {todo.text for todo in todos}
        todos += tuple(Todo(text, "pending", None) for text in self._noted_todos if text not in listed)
        pending = tuple(
            PendingCall(c.tool, c.call_id, call_summary(c.call_input), c.event, c.ts) for c in self._pending.values()
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
            decisions=notes(Kind.NOTE_DECISION),
            rejected=notes(Kind.NOTE_REJECTED),
            assumptions=notes(Kind.NOTE_ASSUMPTION),
            constraints=notes(Kind.NOTE_CONSTRAINT),
            dependencies=notes(Kind.NOTE_DEPENDENCY),
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
