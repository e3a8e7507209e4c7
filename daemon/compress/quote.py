"""How compression quotes events in text: one line of a text, what a tool call was asked to do, a
tool result's output and outcome, when a range of events happened, and the citation that stands
for a payload too large to quote.

The extractive summary (daemon/compress/summary.py) and the transcript an external summarizer
reads (daemon/compress/transcript.py) quote events the same way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from daemon.compress.model import ELIDE_BYTES, Elided
from daemon.transcript.text import text_of
from store.events import Event, canonical_json, format_ts

_CALL_FIELDS = ("file_path", "notebook_path", "command", "cmd", "pattern", "path", "url", "description", "prompt")
_WHITESPACE = re.compile(r"\s+")


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


def output_of(event: Event) -> str:
    """A tool result's output as text. Repeats are found by it, not by the payload's digest: the
    payload holds the call's id too, so the same output of two calls has two digests."""
    return text_of(event.payload.get("output"))


def call_id(payload: dict[str, Any]) -> Any:
    return payload.get("tool_use_id", payload.get("call_id"))


def failed(payload: dict[str, Any]) -> bool:
    return payload.get("is_error") is True or payload.get("ok") is False


def span(events: Sequence[Event]) -> str:
    """When the events happened: imported events carry their source's times, which need not be in
    log order (a record without a time gets the import's), hence the earliest and the latest."""
    times = [e.ts for e in events]
    return f"{format_ts(min(times))} to {format_ts(max(times))}"


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
