"""The built-in extractive summarizer, and the transcript an external summarizer reads.

The extractive summary is made of facts taken from the events, not of generated prose: offline,
deterministic, and cheap enough to run on the daemon's hot path. Its facts come from the handoff
fold (:class:`daemon.handoff.HandoffBuilder`), so a summary and a handoff of the same events
agree. In order of priority:

1. a header naming the range (events, seqs, times);
2. the original request;
3. the latest to-do list (``TodoWrite`` / ``update_plan``);
4. the files changed, with the net action and the writing tool;
5. decisions, rejected alternatives, constraints, assumptions, dependencies and noted to-dos
   (``note.*`` events);
6. errors and whether they were recovered from (identical errors are counted, not repeated);
7. the latest request, when it is not the original one;
8. the last exchanges (messages, tool calls and results), repeated tool output replaced by a
   reference to its first occurrence;
9. tool use per tool, and how many tool results repeated an earlier output.

A payload whose canonical JSON exceeds :data:`~daemon.compress.model.ELIDE_BYTES` is never quoted
whole: the summary cites it as ``[blob <digest> <size>]``. The summary is fitted to its budget by
dropping items from the lowest-priority sections first (the oldest of the last exchanges, the
least-used tools, ...), measured with the caller's token estimator; a last resort cuts the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from daemon.compress.model import ELIDE_BYTES, Elided
from daemon.handoff import Handoff, HandoffBuilder, Request, Subject
from daemon.handoff.text import text_of
from store.events import Event, canonical_json, format_ts

Measure = Callable[[str], int]
Redact = Callable[[str], str]

# How much of each kind of text a summary quotes: enough to act on, never a whole output.
REQUEST_CHARS = 1500
MESSAGE_CHARS = 400
OUTPUT_CHARS = 200
RECENT_ITEMS = 40  # the last exchanges offered; the budget decides how many stay
# The transcript an external summarizer reads: per-event clips, and a cap on the whole (a model
# behind the command has a context window too); past the cap the middle of the range is left out.
TRANSCRIPT_MESSAGE_CHARS = 2000
TRANSCRIPT_OUTPUT_CHARS = 500
TRANSCRIPT_CHARS = 400_000
TRANSCRIPT_HEAD_SHARE = 0.25

TODO_MARKS = {"completed": "[x]", "done": "[x]", "in_progress": "[>]"}
NOTE_TITLES = {
    "note.decision": "Decisions",
    "note.rejected": "Rejected alternatives",
    "note.constraint": "Constraints",
    "note.assumption": "Assumptions",
    "note.dependency": "Dependencies",
    "note.todo": "Noted to-dos",
}
_CALL_FIELDS = ("file_path", "notebook_path", "command", "cmd", "pattern", "path", "url", "description", "prompt")
_WHITESPACE = re.compile(r"\s+")
_INJECTED = re.compile(r"\s*(?:<|# AGENTS\.md instructions|\[Request interrupted|Caveat: The messages below)")


@dataclass(frozen=True, slots=True)
class Summary:
    """A summary's text and the large payloads it cites."""

    text: str
    elided: tuple[Elided, ...]


def one_line(text: str, limit: int) -> str:
    """``text`` with its whitespace collapsed, cut to ``limit`` characters, saying how much was cut."""
    flat = _WHITESPACE.sub(" ", text[: limit * 4]).strip()
    if len(text) <= limit and len(flat) <= limit:
        return flat
    return f"{flat[:limit].rstrip()}… [{len(text)} chars]"


def call_summary(call_input: Any) -> str:
    """One line saying what a tool call was asked to do."""
    if isinstance(call_input, dict):
        for name in _CALL_FIELDS:
            value = call_input.get(name)
            if value:
                return one_line(" ".join(map(str, value)) if isinstance(value, list) else text_of(value), 160)
        return one_line(text_of(call_input), 160)
    if isinstance(call_input, str):
        return one_line(call_input.split("\n", 1)[0], 160)
    return ""


def is_request(event: Event) -> bool:
    """A user message that a person typed (not one the agent harness injected)."""
    payload = event.payload
    if event.kind != "message" or payload.get("role") != "user" or payload.get("meta") is True:
        return False
    text = payload.get("text")
    return isinstance(text, str) and bool(text) and not text.isspace() and not _INJECTED.match(text)


def output_of(event: Event) -> str:
    """A tool result's output as text. Repeats are found by it, not by the payload's digest: the
    payload holds the call's id too, so the same output of two calls has two digests."""
    return text_of(event.payload.get("output"))


def call_id(payload: dict[str, Any]) -> Any:
    return payload.get("tool_use_id", payload.get("call_id"))


def failed(payload: dict[str, Any]) -> bool:
    return payload.get("is_error") is True or payload.get("ok") is False


class BlobCitations:
    """The large payloads a text cites, sized only when cited (sizing means encoding the payload)."""

    def __init__(self) -> None:
        self.cited: dict[str, Elided] = {}

    def cite(self, event: Event) -> str:
        """`` [blob <digest> <size>]`` for a large payload, else the empty string."""
        known = self.cited.get(event.digest)
        if known is not None:
            return f" {known.citation}"
        size = len(canonical_json(event.payload))
        if size <= ELIDE_BYTES:
            return ""
        elided = self.cited[event.digest] = Elided(event.digest, size, event.kind, event.seq)
        return f" {elided.citation}"

    def present_in(self, text: str) -> tuple[Elided, ...]:
        """The cited payloads whose citation ``text`` still holds, by seq."""
        return tuple(sorted((e for e in self.cited.values() if e.citation in text), key=lambda e: e.seq))


@dataclass(slots=True)
class _Section:
    title: str | None
    items: list[str]
    oldest_first: bool = False  # items in log order, so the least important are at the start

    def render(self) -> str:
        lines = [] if self.title is None else [f"{self.title}:"]
        lines += [item.replace("\n", "\n  ") for item in self.items]
        return "\n".join(lines)

    def drop_one(self) -> int:
        """Remove the least important item; the characters it took."""
        item = self.items.pop(0 if self.oldest_first else -1)
        return len(item) + 1 + (len(self.title) + 2 if not self.items and self.title else 0)


def _render(sections: Sequence[_Section]) -> str:
    return "\n\n".join(s.render() for s in sections if s.items)


def fit(sections: Sequence[_Section], budget: int, measure: Measure) -> str:
    """The sections as text within ``budget`` tokens. Items are dropped from the last section
    first; the first section (the header) is only ever cut, as a last resort."""
    text = _render(sections)
    used = measure(text)
    while used > budget:
        removable = [s for s in sections[1:] if s.items]
        if not removable:
            break
        # Drop about as many characters as the excess, judged from the text's chars per token.
        excess = (used - budget) * len(text) / max(used, 1)
        dropped = 0.0
        for section in reversed(removable):
            while section.items and dropped < excess:
                dropped += section.drop_one()
            if dropped >= excess:
                break
        text = _render(sections)
        used = measure(text)
    return clip_to(text, budget, measure)


def clip_to(text: str, budget: int, measure: Measure) -> str:
    """``text`` cut at the end until it measures within ``budget`` tokens ("" if nothing does)."""
    used = measure(text) if text else 0
    while text and used > budget:
        keep = min(len(text) - 1, int(len(text) * budget / max(used, 1)))
        text = text[: max(keep, 0)].rstrip()
        used = measure(text) if text else 0
    return text


def _notes(events: Iterable[Event]) -> dict[str, list[Event]]:
    found: dict[str, list[Event]] = {}
    for event in events:
        if event.kind in NOTE_TITLES and isinstance(event.payload.get("text"), str):
            found.setdefault(event.kind, []).append(event)
    return found


def _note_item(event: Event, redact: Redact) -> str:
    reason = event.payload.get("reason")
    why = f" (because: {one_line(reason, MESSAGE_CHARS)})" if isinstance(reason, str) and reason else ""
    return redact(f"- {one_line(event.payload['text'], MESSAGE_CHARS)}{why}")


def _recent(events: Sequence[Event], blobs: BlobCitations, redact: Redact) -> tuple[list[str], int]:
    """The last exchanges of ``events`` as items in log order, and how many tool results repeat an
    earlier output of the range."""
    first_output: dict[str, int] = {}
    repeats = 0
    for event in events:
        if event.kind == "tool.result":
            first = first_output.setdefault(output_of(event), event.seq)
            if first != event.seq:
                repeats += 1
    items: list[str] = []
    for event in reversed(events):
        if len(items) >= RECENT_ITEMS:
            break
        payload = event.payload
        if event.kind == "message":
            text = payload.get("text")
            if payload.get("meta") is True or not isinstance(text, str) or not text.strip():
                continue
            items.append(redact(f"{payload.get('role', '?')}: {one_line(text, MESSAGE_CHARS)}") + blobs.cite(event))
        elif event.kind == "tool.call":
            tool = payload.get("tool")
            items.append(redact(f"call {tool}: {call_summary(payload.get('input'))}") + blobs.cite(event))
        elif event.kind == "tool.result":
            status = "failed" if failed(payload) else "ok"
            output = output_of(event)
            earliest = first_output.get(output)
            if earliest is not None and earliest != event.seq:
                items.append(f"result {status}: (same output as seq {earliest})")
            else:
                output = one_line(output, OUTPUT_CHARS)
                items.append(redact(f"result {status}: {output}") + blobs.cite(event))
        elif event.kind in NOTE_TITLES and isinstance(payload.get("text"), str):
            items.append(redact(f"{event.kind}: {one_line(payload['text'], MESSAGE_CHARS)}"))
    items.reverse()
    return items, repeats


def _span(events: Sequence[Event]) -> str:
    """When the events happened: imported events carry their source's times, which need not be in
    log order (a record without a time gets the import's), hence the earliest and the latest."""
    times = [e.ts for e in events]
    return f"{format_ts(min(times))} to {format_ts(max(times))}"


def _sections(events: Sequence[Event], handoff: Handoff, blobs: BlobCitations, redact: Redact) -> list[_Section]:
    by_id = {e.id: e for e in events}
    first, last = events[0], events[-1]

    def cite(event_id: str | None) -> str:
        event = None if event_id is None else by_id.get(event_id)
        return "" if event is None else blobs.cite(event)

    header = _Section(None, [f"Summary of {len(events)} events, seq {first.seq}–{last.seq} ({_span(events)})."])
    sections = [header]
    original = handoff.original_request
    if original is not None:
        sections.append(_Section("Original request", [redact(original.text) + cite(original.event)]))
    if handoff.todos:
        todos_event = by_id.get(handoff.todos_event or "")
        where = "" if todos_event is None else f", seq {todos_event.seq}"
        done = sum(1 for t in handoff.todos if t.status in ("completed", "done"))
        sections.append(
            _Section(
                f"To-dos ({done} of {len(handoff.todos)} done; latest list{where})",
                [redact(f"{TODO_MARKS.get(t.status, '[ ]')} {t.text}") for t in handoff.todos],
            )
        )
    if handoff.files:
        items = []
        for change in handoff.files:
            detail = f"{change.tool} ×{change.writes}" + (f", {change.failed} failed" if change.failed else "")
            tail = " — the last write failed" if change.ok is False else ""
            items.append(redact(f"{change.action} {change.path} ({detail}){tail}"))
        if handoff.files_omitted:
            items.append(f"… and {handoff.files_omitted} more files")
        sections.append(_Section(f"Files changed ({len(handoff.files) + handoff.files_omitted})", items))
    for kind, notes in _notes(events).items():
        sections.append(_Section(NOTE_TITLES[kind], [_note_item(e, redact) for e in notes], oldest_first=True))
    if handoff.errors:
        grouped: dict[tuple[str | None, str], list[Any]] = {}
        for error in handoff.errors:
            key = (error.tool, error.text)
            grouped.setdefault(key, []).append(error)
        items = []
        for (tool, text), same in grouped.items():
            latest = same[-1]
            what = f"{tool or 'error'}" + (f" ({latest.summary})" if latest.summary else "")
            times = f" ×{len(same)}" if len(same) > 1 else ""
            outcome = "recovered later" if latest.recovered else "not recovered"
            # The fold keeps errors clipped; quote the event's own text, so the length shown is true.
            source = by_id.get(latest.event)
            if source is not None and source.kind == "tool.result":
                text = output_of(source)
            items.append(redact(f"- {what}: {one_line(text, OUTPUT_CHARS)}{times} — {outcome}") + cite(latest.event))
        recovered = sum(1 for e in handoff.errors if e.recovered)
        sections.append(
            _Section(
                f"Errors ({handoff.error_count} in all; of the latest {len(handoff.errors)}, {recovered} recovered)",
                items,
                oldest_first=True,
            )
        )
    request = handoff.request
    if request is not None and (original is None or request.event != original.event):
        sections.append(_Section("Latest request", [redact(request.text) + cite(request.event)]))
    recent, repeats = _recent(events, blobs, redact)
    if recent:
        sections.append(_Section("Last exchanges", recent, oldest_first=True))
    tools = sorted(handoff.tools, key=lambda t: (-t.uses, t.tool))
    if tools:
        sections.append(
            _Section(
                "Tools used",
                [f"{t.tool} ×{t.uses}" + (f" ({t.failures} failed)" if t.failures else "") for t in tools],
            )
        )
    if repeats:
        sections.append(_Section(None, [f"Left out: {repeats} tool results that repeat an earlier output."]))
    return sections


def extractive_summary(
    events: Sequence[Event],
    *,
    budget: int,
    measure: Measure,
    redact: Redact,
    original_request: Request | None = None,
) -> Summary:
    """The summary of ``events`` (a range of one session, in log order) within ``budget`` tokens as
    ``measure`` counts them. Every text is passed through ``redact``. ``original_request``: the
    trace's first request, when it lies before ``events``."""
    if not events or budget <= 0:
        return Summary("", ())
    first = events[0]
    handoff = (
        HandoffBuilder(original_request)
        .add_all(events)
        .finish(Subject(agent=first.agent or "main", session=first.session))
    )
    blobs = BlobCitations()
    text = fit(_sections(events, handoff, blobs, redact), budget, measure)
    elided = blobs.present_in(text)
    return Summary(clip_to(redact(text), budget, measure), elided)


def _transcript_line(
    event: Event, first_output: dict[str, int], blobs: BlobCitations, tools: dict[Any, str]
) -> str | None:
    payload = event.payload
    kind = event.kind
    if kind == "message":
        text = payload.get("text")
        if not isinstance(text, str) or not text.strip():
            return None
        role = payload.get("role", "?") + (" (injected)" if payload.get("meta") is True else "")
        body = text if len(text) <= TRANSCRIPT_MESSAGE_CHARS else one_line(text, TRANSCRIPT_MESSAGE_CHARS)
        return f"[{event.seq}] {role}: {body}{blobs.cite(event) if len(text) > TRANSCRIPT_MESSAGE_CHARS else ''}"
    if kind == "tool.call":
        tool = payload.get("tool")
        tools[call_id(payload)] = str(tool)
        return f"[{event.seq}] call {tool}: {call_summary(payload.get('input'))}{blobs.cite(event)}"
    if kind == "tool.result":
        tool = tools.get(call_id(payload), "tool")
        status = "failed" if failed(payload) else "ok"
        output = output_of(event)
        first = first_output.setdefault(output, event.seq)
        if first != event.seq:
            return f"[{event.seq}] {tool} {status}: (same output as seq {first})"
        output = one_line(output, TRANSCRIPT_OUTPUT_CHARS)
        return f"[{event.seq}] {tool} {status}: {output}{blobs.cite(event)}"
    if kind in NOTE_TITLES and isinstance(payload.get("text"), str):
        reason = payload.get("reason")
        why = f" (because: {one_line(reason, MESSAGE_CHARS)})" if isinstance(reason, str) and reason else ""
        return f"[{event.seq}] {kind}: {one_line(payload['text'], TRANSCRIPT_MESSAGE_CHARS)}{why}"
    if kind == "compaction" and isinstance(payload.get("summary"), str):
        return f"[{event.seq}] earlier summary: {one_line(payload['summary'], TRANSCRIPT_MESSAGE_CHARS)}"
    if kind == "error":
        text = payload.get("text", payload.get("message", payload.get("error")))
        return f"[{event.seq}] error: {one_line(text_of(text), TRANSCRIPT_OUTPUT_CHARS)}"
    return None  # usage, thinking, raw records, metadata: nothing a summary needs


def transcript(events: Sequence[Event], blobs: BlobCitations, limit: int = TRANSCRIPT_CHARS) -> str:
    """``events`` as the text an external summarizer reads: one line per message, tool call, tool
    result, note or error, prefixed with its seq; large payloads cited, repeated outputs
    referenced; past ``limit`` characters, the middle left out. Not redacted: the caller does it."""
    if not events:
        return ""
    first_output: dict[str, int] = {}
    tools: dict[Any, str] = {}
    lines = [f"Events seq {events[0].seq}–{events[-1].seq} of session {events[0].session} ({_span(events)}):"]
    for event in events:
        line = _transcript_line(event, first_output, blobs, tools)
        if line is not None:
            lines.append(line)
    if sum(len(line) + 1 for line in lines) <= limit:
        return "\n".join(lines)
    head: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > limit * TRANSCRIPT_HEAD_SHARE:
            break
        head.append(line)
        used += len(line) + 1
    tail: list[str] = []
    for line in reversed(lines[len(head) :]):
        if used + len(line) + 1 > limit - 80:
            break
        tail.append(line)
        used += len(line) + 1
    tail.reverse()
    left_out = len(lines) - len(head) - len(tail)
    return "\n".join([*head, f"[… {left_out} lines left out …]", *tail])
