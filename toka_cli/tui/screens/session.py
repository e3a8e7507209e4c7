"""One session: its timeline (latest events, older ones a page at a time, raw records hidden until
`a`), the payload of the selected event, and the context-fill curve of its usage events; and a
replay scrubber that shows the session as it stood at a chosen event (`r` at the highlighted
event, `,` and `.` one event back and forth, `end` back to now).

The screen is made once and shows whichever session is opened (`show`): opening a session then
costs its reads, not the building of a screen.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from daemon.client.replay import LIFECYCLE, RAW
from daemon.contract.kinds import Kind
from store.errors import TokaError
from toka_cli.render import day_ts
from toka_cli.tui.fill_curve import THRESHOLDS, FillCurve
from toka_cli.tui.notices import compressed, handed_off, verified
from toka_cli.tui.rows_view import RowsView
from toka_cli.tui.timeline import COLUMNS, RowMaker, context_tokens, payload_view, shown_order
from toka_cli.tui.widgets import TokaScreen, fill_gauge, fill_style

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.app import ComposeResult

    from daemon.contract.results import Event, EventsPage, Session

# Events read per page: enough to fill a tall terminal, small enough to show at once.
PAGE = 100
# Usage events read for the fill curve (the latest ones); the curve squeezes them to its width.
CURVE_POINTS = 2000


class SessionScreen(TokaScreen):
    TAB = "session"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.leave_session", "Back", id="session.back"),
        Binding("left_square_bracket", "older", "Older", key_display="[", id="session.older"),
        Binding("end", "latest", "Latest", id="session.latest", priority=True),
        Binding("r", "replay", "Replay", id="session.replay"),
        Binding("comma", "step(-1)", "Step back", key_display=",", id="session.step_back", show=False),
        Binding("full_stop", "step(1)", "Step on", key_display=".", id="session.step_on", show=False),
        Binding("a", "toggle_raw", "Raw", id="session.raw"),
        Binding("c", "compress", "Compress", id="session.compress"),
        Binding("h", "handoff", "Handoff", id="session.handoff"),
        Binding("v", "verify", "Verify", id="session.verify"),
        Binding("g", "refresh", "Refresh", id="session.refresh", show=False),
    ]

    def __init__(self, session: str | None = None, at_seq: int | None = None) -> None:
        super().__init__()
        self.session = session or ""
        self.at_seq = at_seq
        self.show_raw = False
        self.events: dict[int, Event] = {}
        self.later_lifecycle: list[Event] = []  # changes committed after the replay point, caused before it
        self.more = False
        self.curve: list[float] = []
        self.replay_to: int | None = None  # the seq the session is shown as it stood at
        self.then: Callable[[], object] | None = None  # what show() asked for once the rows are in
        self.rows = RowMaker(date.today())
        self.position = 0  # how many of the session's events the replay point is
        # Held here rather than queried: a worker's answer may arrive while the screen is
        # being taken down, when its children can no longer be found.
        self.title_line = Static(self.session, id="session-title")
        self.fill_curve = FillCurve(id="fill-curve")
        self.timeline = RowsView(COLUMNS, id="timeline")
        self.payload = Static("", id="payload")

    def compose(self) -> ComposeResult:
        yield from self.compose_top()
        yield self.title_line
        yield self.fill_curve
        yield self.timeline
        with VerticalScroll(id="payload-box"):
            yield self.payload
        yield from self.compose_keys()

    def show(self, session: str, at_seq: int | None = None, then: Callable[[], object] | None = None) -> None:
        """Show ``session`` (at ``at_seq``, as a search hit opens it), from its latest events;
        ``then`` once its rows are in (the app brings the screen up then: one refresh, not two)."""
        self.session, self.at_seq, self.replay_to, self.then = session, at_seq, None, then
        self.events, self.later_lifecycle, self.curve = {}, [], []
        self.timeline.clear()
        self.payload.update("")
        self.title_line.update(session)
        self.fill_curve.show([], None)
        if self.is_attached and self.toka.client is not None:
            self.reload()

    def reload(self) -> None:
        if self.session:
            self._load()

    def _kinds(self) -> list[str]:
        return [] if self.show_raw else [f"!{RAW}"]

    @work(exclusive=True, group="session")
    async def _load(self) -> None:
        try:
            args: dict[str, Any] = {"session": self.session, "order": "desc", "limit": PAGE, "kinds": self._kinds()}
            if self.replay_to is not None:
                args["before_seq"] = self.replay_to + 1
            elif self.at_seq is not None:
                args["before_seq"] = self.at_seq + PAGE // 2
            page: EventsPage = await self.toka.call("events.query", **args)
            if self.gone:
                return
            self.session = page.get("session") or self.session
            self.more = len(page["events"]) == PAGE
            self.events = {event["seq"]: event for event in page["events"]}
            self.later_lifecycle = []
            self._show_timeline(focus=self.replay_to if self.replay_to is not None else self.at_seq)
            self._shown()
            await self._read_figures()
        except TokaError as error:
            self._shown()
            self.show_error(error, title=f"cannot read session {self.session}")

    def _shown(self) -> None:
        then, self.then = self.then, None
        if then is not None:
            then()

    async def _read_figures(self) -> None:
        """What the title and the curve show, read after the rows are up."""
        summary: Session = await self.toka.call("sessions.get", session=self.session)
        point: dict[str, Any] = {} if self.replay_to is None else {"before_seq": self.replay_to + 1}
        if self.replay_to is not None:
            later: EventsPage = await self.toka.call(
                "events.query", session=self.session, kinds=[LIFECYCLE], after_seq=self.replay_to, limit=PAGE
            )
            self.later_lifecycle = later["events"]
            self._show_timeline(focus=self.replay_to)
            counted = await self.toka.call("events.count", session=self.session, **point)
            self.position = counted["events"]
        usage: EventsPage = {"session": self.session, "events": [], "more": False}
        if summary["kinds"].get(Kind.USAGE):  # else the query would read the whole session to find none
            usage = await self.toka.call(
                "events.query", session=self.session, kinds=[Kind.USAGE], order="desc", limit=CURVE_POINTS, **point
            )
        try:
            agent = await self.toka.call("agents.get", agent=self.session)
            thresholds = (agent["thresholds"]["warning_pct"], agent["thresholds"]["critical_pct"])
        except TokaError:  # no main agent to ask (a session of several, or none)
            thresholds = THRESHOLDS
        if self.gone:
            return
        main = [e for e in reversed(usage["events"]) if e.get("agent") in (None, "main")]
        points = [(e, float(p)) for e in main if (p := context_tokens(e["payload"])) is not None]
        self.curve = [p for _, p in points]
        today = self.toka.today()
        span = (day_ts(points[0][0]["ts"], today), day_ts(points[-1][0]["ts"], today)) if points else ("", "")
        self.fill_curve.show(self.curve, summary.get("context_window"), thresholds, span)
        self._show_title(summary)

    def _show_title(self, summary: Session) -> None:
        pct = summary.get("fill_pct")
        title = Text(f"{summary['session']}  ", style="bold")
        if self.replay_to is not None:
            window, latest = summary.get("context_window"), self.curve[-1] if self.curve else None
            pct = round(100 * latest / window, 1) if latest is not None and window else None
            shown = self.events.get(self.replay_to)
            when = day_ts(shown["ts"], self.toka.today()) if shown else "?"
            title.append(
                f"replay at seq {self.replay_to} ({when}): event {self.position:,} of {summary['events']:,} · "
            )
        else:
            title.append(f"{summary['events']:,} events · ")
        title.append_text(fill_gauge(pct, fill_style(pct)))
        if summary.get("model"):
            title.append(f" · {summary['model']}")
        self.title_line.update(title)

    def _show_timeline(self, focus: int | None = None) -> None:
        table = self.timeline
        self.rows = RowMaker(self.toka.today())
        table.set_rows([(str(e["seq"]), self.rows.row(e)) for e in shown_order(self.events, self.later_lifecycle)])
        if not table.row_count:
            return
        if focus is not None and focus in self.events:
            table.move_cursor(row=table.get_row_index(str(focus)))
        elif focus is None:
            table.move_cursor(row=table.row_count - 1)

    def live_event(self, event: Event) -> None:
        stopped = self.at_seq is not None or self.replay_to is not None
        if event["session"] != self.session or not self.events or stopped or event["seq"] in self.events:
            return
        if event["kind"] == RAW and not self.show_raw:
            return
        table = self.timeline
        following = table.cursor_row >= table.row_count - 1
        self.events[event["seq"]] = event
        table.add_row(*self.rows.row(event), key=str(event["seq"]))
        if following:
            table.move_cursor(row=table.row_count - 1)
        if event["kind"] == Kind.USAGE and (tokens := context_tokens(event["payload"])) is not None:
            self.curve.append(float(tokens))
            curve, last = self.fill_curve, day_ts(event["ts"], self.toka.today())
            curve.show(self.curve[-CURVE_POINTS:], curve.window, curve.thresholds, (curve.span[0], last))

    def on_rows_view_highlighted(self, event: RowsView.Highlighted) -> None:
        shown = self.events.get(int(event.key))
        if shown is None:
            shown = next((e for e in self.later_lifecycle if str(e["seq"]) == event.key), None)
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
                "events.query", session=self.session, order="desc", before_seq=before, limit=PAGE, kinds=self._kinds()
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
        self.events.update({event["seq"]: event for event in page["events"]})
        self._show_timeline(focus=before)

    def action_latest(self) -> None:
        self.at_seq = None
        self.replay_to = None
        self.reload()

    def action_refresh(self) -> None:
        self.reload()

    def action_toggle_raw(self) -> None:
        self.show_raw = not self.show_raw
        self.notify("raw records shown" if self.show_raw else "raw records hidden")
        self.reload()

    def action_replay(self) -> None:
        key = self.timeline.cursor_key
        if key is not None:
            self.replay_to = int(key)
            self.reload()

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
        self.reload()

    def action_compress(self) -> None:
        self.act(f"Compress session {self.session}?", "compress", {"session": self.session}, compressed)

    def action_handoff(self) -> None:
        self.act(
            f"Create a handoff for session {self.session}?", "handoffs.create", {"target": self.session}, handed_off
        )

    def action_verify(self) -> None:
        self.act(None, "verify", {"session": self.session}, lambda report: verified(self, report))
