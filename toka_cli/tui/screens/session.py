"""One session: its timeline (latest events, older ones a page at a time), the payload of the
selected event, and the context-fill curve of its usage events; and a replay scrubber that shows
the session as it stood at a chosen event (`r` at the highlighted event, `,` and `.` one event
back and forth, `end` back to now)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Header, Sparkline, Static

from store.errors import TokaError
from toka_cli.gists import gist
from toka_cli.render import short_ts
from toka_cli.tui.notices import compressed, handed_off, verified
from toka_cli.tui.widgets import LIFECYCLE_KINDS, TokaScreen, fill_gauge, fill_style

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from daemon.client.results import Event, EventsPage, Session

# Events read per page: enough to fill a tall terminal, small enough to show at once.
PAGE = 100
# Usage events read for the fill curve (the latest ones); the sparkline squeezes them to its width.
CURVE_POINTS = 2000
# Characters of pretty-printed payload shown; the rest is cut with a note.
PAYLOAD_CHARS = 20_000
MARKS = {
    "compression": "◆",
    "compaction": "◆",
    "summary": "◆",
    "hook.pre_compact": "◆",
    "handoff": "⇒",
    "lifecycle": "●",
}


def context_tokens(payload: dict[str, Any]) -> int | None:
    """The prompt a usage event reports: its own figure, else input plus cache as Anthropic counts."""
    if isinstance(payload.get("context_tokens"), int):
        return int(payload["context_tokens"])
    if payload.get("revision"):
        return None
    parts = [payload.get(k) for k in ("input_tokens", "cache_creation_tokens", "cache_read_tokens")]
    numbers = [p for p in parts if isinstance(p, int)]
    return sum(numbers) if numbers else None


class SessionScreen(TokaScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="session.back"),
        Binding("left_square_bracket", "older", "Older", key_display="[", id="session.older"),
        Binding("end", "latest", "Latest", id="session.latest", priority=True),
        Binding("r", "replay", "Replay to here", id="session.replay"),
        Binding("comma", "step(-1)", "Step back", key_display=",", id="session.step_back"),
        Binding("full_stop", "step(1)", "Step on", key_display=".", id="session.step_on"),
        Binding("c", "compress", "Compress", id="session.compress"),
        Binding("h", "handoff", "Handoff", id="session.handoff"),
        Binding("v", "verify", "Verify", id="session.verify"),
    ]

    def __init__(self, session: str, at_seq: int | None = None) -> None:
        super().__init__()
        self.session = session
        self.at_seq = at_seq
        self.events: dict[int, Event] = {}
        self.calls: dict[str, int] = {}
        self.more = False
        self.curve: list[float] = []
        self.replay_to: int | None = None  # the seq the session is shown as it stood at
        # Held here rather than queried: a worker's answer may arrive while the screen is
        # being taken down, when its children can no longer be found.
        self.title_line = Static(session, id="session-title")
        self.fill_curve = Sparkline([], id="fill-curve")
        self.timeline: DataTable[Any] = DataTable(id="timeline", cursor_type="row")
        self.timeline.add_columns(" ", "seq", "time", "agent", "kind", "gist")
        self.payload = Static("", id="payload")

    def compose(self) -> ComposeResult:
        yield Header()
        yield from self.compose_banner()
        yield self.title_line
        yield self.fill_curve
        yield self.timeline
        with VerticalScroll(id="payload-box"):
            yield self.payload
        yield Footer(compact=True)

    def reload(self) -> None:
        self._load()

    @work(exclusive=True, group="session")
    async def _load(self) -> None:
        try:
            args: dict[str, Any] = {"session": self.session, "order": "desc", "limit": PAGE}
            if self.replay_to is not None:
                args["before_seq"] = self.replay_to + 1
            elif self.at_seq is not None:
                args["before_seq"] = self.at_seq + PAGE // 2
            page: EventsPage = await self.toka.call("events.query", **args)
            if self.gone:
                return
            self.session = page.get("session") or self.session
            self.more = len(page["events"]) == PAGE
            self.events = {}
            self._add(page["events"])
            self._show_timeline(focus=self.replay_to if self.replay_to is not None else self.at_seq)
            summary: Session = await self.toka.call("sessions.get", session=self.session)
            if self.gone:
                return
            curve_args: dict[str, Any] = {"kinds": ["usage"], "order": "desc", "limit": CURVE_POINTS}
            if self.replay_to is not None:
                curve_args["before_seq"] = self.replay_to + 1
            usage: EventsPage = await self.toka.call("events.query", session=self.session, **curve_args)
        except TokaError as error:
            self.show_error(error, title=f"cannot read session {self.session}")
            return
        if self.gone:
            return
        points = [context_tokens(e["payload"]) for e in reversed(usage["events"]) if e.get("agent") in (None, "main")]
        self.curve = [float(p) for p in points if p is not None]
        self.fill_curve.data = self.curve
        self._show_title(summary)

    def _replayed(self, summary: Session) -> Session:
        """The title's figures as they stood at ``replay_to``: events up to it, the fill of the
        latest usage before it (on the session's window as it is now)."""
        shown = self.events.get(self.replay_to or 0)
        window = summary.get("context_window")
        latest = self.curve[-1] if self.curve else None
        pct = round(100 * latest / window, 1) if latest is not None and window else None
        events = sum(1 for seq in self.events if self.replay_to is not None and seq <= self.replay_to)
        when = short_ts(shown["ts"]) if shown else "?"
        label = f"{summary['session']} as it stood at seq {self.replay_to} ({when})"
        return summary | {"session": label, "fill_pct": pct, "events": events}

    def _add(self, events: list[Event]) -> None:
        for event in events:
            self.events[event["seq"]] = event

    def _show_title(self, summary: Session) -> None:
        if self.replay_to is not None:
            summary = self._replayed(summary)
        pct = summary.get("fill_pct")
        title = Text(f"{summary['session']}  ", style="bold")
        title.append(f"{summary['events']:,} events · ")
        title.append_text(fill_gauge(pct, fill_style(pct)))
        if summary.get("model"):
            title.append(f" · {summary['model']}")
        self.title_line.update(title)

    def _row(self, event: Event) -> tuple[Any, ...]:
        payload = event["payload"]
        line = gist(event["kind"], payload, 200)
        call_id = payload.get("tool_use_id") or payload.get("call_id")
        if event["kind"] == "tool.call" and isinstance(call_id, str):
            self.calls[call_id] = event["seq"]
        elif event["kind"] == "tool.result" and isinstance(call_id, str) and call_id in self.calls:
            line = f"↳ #{self.calls[call_id]} {line}"
        mark = MARKS.get(event["kind"], "")
        kind = Text(event["kind"], style="bold yellow" if event["kind"] in LIFECYCLE_KINDS else "")
        return (
            Text(mark, style="yellow"),
            str(event["seq"]),
            short_ts(event["ts"])[11:],
            event.get("agent") or "-",
            kind,
            line,
        )

    def _show_timeline(self, focus: int | None = None) -> None:
        table = self.timeline
        table.clear()
        self.calls = {}
        for seq in sorted(self.events):
            table.add_row(*self._row(self.events[seq]), key=str(seq))
        if not table.row_count:
            return
        if focus is not None and focus in self.events:
            table.move_cursor(row=table.get_row_index(str(focus)))
        elif focus is None:
            table.move_cursor(row=table.row_count - 1)

    def live_event(self, event: Event) -> None:
        stopped = self.at_seq is not None or self.replay_to is not None
        if event["session"] != self.session or not self.events or stopped:
            return
        if event["seq"] in self.events:
            return
        table = self.timeline
        following = table.cursor_row >= table.row_count - 1
        self.events[event["seq"]] = event
        table.add_row(*self._row(event), key=str(event["seq"]))
        if following:
            table.move_cursor(row=table.row_count - 1)
        if event["kind"] == "usage" and (tokens := context_tokens(event["payload"])) is not None:
            self.curve.append(float(tokens))
            self.fill_curve.data = list(self.curve[-CURVE_POINTS:])

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is None:
            return
        shown = self.events.get(int(event.row_key.value))
        if shown is not None:
            self.payload.update(payload_view(shown))

    def action_older(self) -> None:
        if not self.events:
            return
        if not self.more and self.at_seq is None:
            self.notify("this is the session's first event")
            return
        self._older(min(self.events))

    @work(exclusive=True, group="session")
    async def _older(self, before: int) -> None:
        try:
            page = await self.toka.call(
                "events.query", session=self.session, order="desc", before_seq=before, limit=PAGE
            )
        except TokaError as error:
            self.show_error(error)
            return
        if self.gone:
            return
        self.more = len(page["events"]) == PAGE
        if not page["events"]:
            self.notify("this is the session's first event")
            return
        self._add(page["events"])
        self._show_timeline(focus=before)

    def action_latest(self) -> None:
        self.at_seq = None
        self.replay_to = None
        self._load()

    def action_replay(self) -> None:
        table = self.timeline
        if not table.row_count:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        if key is not None:
            self.replay_to = int(key)
            self._load()

    def action_step(self, by: int) -> None:
        """Move the replay point to the event before (-1) or after (+1) it."""
        if self.replay_to is None:
            self.notify("press r on an event first: the session is shown as it stands now")
            return
        seqs = sorted(self.events)
        index = seqs.index(self.replay_to) if self.replay_to in seqs else len(seqs) - 1
        if by < 0 and index > 0:
            self.replay_to = seqs[index - 1]
        elif by > 0:
            self.replay_to = seqs[index + 1] if index + 1 < len(seqs) else self.replay_to + 1
        self._load()

    def action_compress(self) -> None:
        self.act(f"Compress session {self.session}?", "compress", {"session": self.session}, compressed)

    def action_handoff(self) -> None:
        self.act(
            f"Create a handoff for session {self.session}?", "handoffs.create", {"target": self.session}, handed_off
        )

    def action_verify(self) -> None:
        self.act(None, "verify", {"session": self.session}, lambda report: verified(self, report))


def payload_view(event: Event) -> Group:
    """The payload as highlighted JSON, cut at PAYLOAD_CHARS with a note saying how much is left out."""
    text = json.dumps(event["payload"], indent=2, ensure_ascii=False)
    note = ""
    if len(text) > PAYLOAD_CHARS:
        note = f"\n… {len(text) - PAYLOAD_CHARS:,} more characters (toka show / toka events --json for all)"
        text = text[:PAYLOAD_CHARS]
    header = Text(f"seq {event['seq']} · {event['kind']} · {event['id'][:16]}", style="bold")
    return Group(header, Syntax(text, "json", word_wrap=True, theme="ansi_dark"), Text(note, style="italic"))
