"""The transcript an external summarizer reads: a range of events as text, one line per event.

Messages, tool calls and results, notes, earlier summaries and errors each get a line prefixed
with their seq; usage, thinking, raw records and metadata get none. Texts are clipped per line
and the whole is capped (a model behind the command has a context window too): past the cap the
middle of the range is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from daemon.compress.quote import BlobCitations, call_id, call_summary, failed, one_line, output_of, span
from daemon.compress.summary import MESSAGE_CHARS, NOTE_TITLES
from daemon.contract.kinds import Kind
from daemon.transcript.text import text_of
from store.events import Event

# Per-event clips, and a cap on the whole; past the cap the head keeps this share of it.
TRANSCRIPT_MESSAGE_CHARS = 2000
TRANSCRIPT_OUTPUT_CHARS = 500
TRANSCRIPT_CHARS = 400_000
TRANSCRIPT_HEAD_SHARE = 0.25


def _transcript_line(
    event: Event, first_output: dict[str, int], blobs: BlobCitations, tools: dict[Any, str]
) -> str | None:
    payload = event.payload
    kind = event.kind
    if kind == Kind.MESSAGE:
        text = payload.get("text")
        if not isinstance(text, str) or not text.strip():
            return None
        role = payload.get("role", "?") + (" (injected)" if payload.get("meta") is True else "")
        body = text if len(text) <= TRANSCRIPT_MESSAGE_CHARS else one_line(text, TRANSCRIPT_MESSAGE_CHARS)
        return f"[{event.seq}] {role}: {body}{blobs.cite(event) if len(text) > TRANSCRIPT_MESSAGE_CHARS else ''}"
    if kind == Kind.TOOL_CALL:
        tool = payload.get("tool")
        tools[call_id(payload)] = str(tool)
        return f"[{event.seq}] call {tool}: {call_summary(payload.get('input'))}{blobs.cite(event)}"
    if kind == Kind.TOOL_RESULT:
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
    if kind in (Kind.COMPACTION, Kind.COMPACTION_SUMMARY) and isinstance(payload.get("summary"), str):
        return f"[{event.seq}] earlier summary: {one_line(payload['summary'], TRANSCRIPT_MESSAGE_CHARS)}"
    if kind == Kind.ERROR:
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
    lines = [f"Events seq {events[0].seq}–{events[-1].seq} of session {events[0].session} ({span(events)}):"]
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
