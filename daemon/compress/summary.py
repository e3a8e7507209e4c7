"""The built-in extractive summarizer.

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

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from daemon.compress.model import Elided
from daemon.compress.quote import BlobCitations, call_summary, failed, one_line, output_of, span
from daemon.contract.kinds import Kind
from daemon.handoff import Handoff, HandoffBuilder, Request, Subject
from store.events import Event

Measure = Callable[[str], int]
Redact = Callable[[str], str]

# How much of each kind of text a summary quotes: enough to act on, never a whole output.
MESSAGE_CHARS = 400
OUTPUT_CHARS = 200
RECENT_ITEMS = 40  # the last exchanges offered; the budget decides how many stay

TODO_MARKS = {"completed": "[x]", "done": "[x]", "in_progress": "[>]"}
NOTE_TITLES: dict[str, str] = {
    Kind.NOTE_DECISION: "Decisions",
    Kind.NOTE_REJECTED: "Rejected alternatives",
    Kind.NOTE_CONSTRAINT: "Constraints",
    Kind.NOTE_ASSUMPTION: "Assumptions",
    Kind.NOTE_DEPENDENCY: "Dependencies",
    Kind.NOTE_TODO: "Noted to-dos",
}


@dataclass(frozen=True, slots=True)
class Summary:
    """A summary's text and the large payloads it cites."""

    text: str
    elided: tuple[Elided, ...]


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
        if event.kind == Kind.TOOL_RESULT:
            first = first_output.setdefault(output_of(event), event.seq)
            if first != event.seq:
                repeats += 1
    items: list[str] = []
    for event in reversed(events):
        if len(items) >= RECENT_ITEMS:
            break
        payload = event.payload
        if event.kind == Kind.MESSAGE:
            text = payload.get("text")
            if payload.get("meta") is True or not isinstance(text, str) or not text.strip():
                continue
            items.append(redact(f"{payload.get('role', '?')}: {one_line(text, MESSAGE_CHARS)}") + blobs.cite(event))
        elif event.kind == Kind.TOOL_CALL:
            tool = payload.get("tool")
            items.append(redact(f"call {tool}: {call_summary(payload.get('input'))}") + blobs.cite(event))
        elif event.kind == Kind.TOOL_RESULT:
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


def _sections(events: Sequence[Event], handoff: Handoff, blobs: BlobCitations, redact: Redact) -> list[_Section]:
    by_id = {e.id: e for e in events}
    first, last = events[0], events[-1]

    def cite(event_id: str | None) -> str:
        event = None if event_id is None else by_id.get(event_id)
        return "" if event is None else blobs.cite(event)

    header = _Section(None, [f"Summary of {len(events)} events, seq {first.seq}–{last.seq} ({span(events)})."])
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
            if source is not None and source.kind == Kind.TOOL_RESULT:
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
