"""A session's timeline as rows: the order events are shown in (each lifecycle change right after
its cause, as `toka replay` shows them), one row per event with its mark and gist, and the payload
of the highlighted one."""

from __future__ import annotations

import json
from datetime import date
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text

from daemon.client.replay import LIFECYCLE, causal_order
from daemon.contract.kinds import Kind
from toka_cli.gists import gist
from toka_cli.render import day_ts
from toka_cli.tui.widgets import LIFECYCLE_KINDS

if TYPE_CHECKING:
    from collections.abc import Iterable

    from daemon.contract.results import Event

# Characters of pretty-printed payload shown; the rest is cut with a note.
PAYLOAD_CHARS = 20_000
MARKS: dict[str, str] = {
    Kind.COMPRESSION: "◆",
    Kind.COMPACTION: "◆",
    Kind.SUMMARY: "◆",
    Kind.HOOK_PRE_COMPACT: "◆",
    Kind.HANDOFF: "⇒",
    Kind.LIFECYCLE: "●",
}
COLUMNS = (" ", "seq", "time", "agent", "kind", "gist")


def context_tokens(payload: dict[str, Any]) -> int | None:
    """The prompt a usage event reports: its own figure, else input plus cache as Anthropic counts."""
    if isinstance(payload.get("context_tokens"), int):
        return int(payload["context_tokens"])
    if payload.get("revision"):
        return None
    parts = [payload.get(k) for k in ("input_tokens", "cache_creation_tokens", "cache_read_tokens")]
    numbers = [p for p in parts if isinstance(p, int)]
    return sum(numbers) if numbers else None


def shown_order(events: dict[int, Event], later_lifecycle: Iterable[Event] = ()) -> list[Event]:
    """The events in the order the timeline shows them: seq order, each lifecycle change right
    after its cause; ``later_lifecycle`` are changes committed after the last event shown (a
    replay's point) whose cause may be among them."""
    ordered = [events[seq] for seq in sorted(events)]
    lifecycle = [e for e in ordered if e["kind"] == LIFECYCLE] + list(later_lifecycle)
    return list(causal_order(ordered, lifecycle))


class RowMaker:
    """Rows of one timeline: it pairs each tool result with the row number of its call."""

    def __init__(self, today: date) -> None:
        self.today = today
        self.calls: dict[str, int] = {}

    def row(self, event: Event) -> tuple[Any, ...]:
        payload = event["payload"]
        line = gist(event["kind"], payload, 200)
        call_id = payload.get("tool_use_id") or payload.get("call_id")
        if event["kind"] == Kind.TOOL_CALL and isinstance(call_id, str):
            self.calls[call_id] = event["seq"]
        elif event["kind"] == Kind.TOOL_RESULT and isinstance(call_id, str) and call_id in self.calls:
            line = f"↳ #{self.calls[call_id]} {line}"
        kind = Text(event["kind"], style="bold yellow" if event["kind"] in LIFECYCLE_KINDS else "")
        return (
            Text(MARKS.get(event["kind"], ""), style="yellow"),
            str(event["seq"]),
            day_ts(event["ts"], self.today),
            event.get("agent") or "-",
            kind,
            line,
        )


def payload_view(event: Event) -> Group:
    """The payload as highlighted JSON, cut at PAYLOAD_CHARS with a note saying how much is left out."""
    text = json.dumps(event["payload"], indent=2, ensure_ascii=False)
    note = ""
    if len(text) > PAYLOAD_CHARS:
        note = f"\n… {len(text) - PAYLOAD_CHARS:,} more characters (toka show / toka events --json for all)"
        text = text[:PAYLOAD_CHARS]
    header = Text(f"seq {event['seq']} · {event['kind']} · {event['id'][:16]}", style="bold")
    return Group(header, Syntax(text, "json", word_wrap=True, theme="ansi_dark"), Text(note, style="italic"))
