"""Small pieces the screens share: the fill gauge, the offline banner, the base screen."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from rich.text import Text
from textual import work
from textual.screen import Screen
from textual.widgets import DataTable, Static

from daemon.contract.kinds import Kind
from daemon.contract.states import AgentState
from store.errors import TokaError
from toka_cli.tui.chrome import KeyBar, TabBar

if TYPE_CHECKING:
    from collections import deque
    from collections.abc import Callable
    from datetime import date

    from textual.app import ComposeResult

    from daemon.client.aio import AsyncClient
    from daemon.contract.results import Event, Thresholds

# The agent states that deserve a colour, worst first; the rest read as normal text.
STATE_STYLES: dict[str, str] = {
    AgentState.ERROR: "bold red",
    AgentState.CRITICAL: "bold red",
    AgentState.HANDOFF_PENDING: "yellow",
    AgentState.WARNING: "yellow",
    AgentState.TERMINATED: "dim",
    AgentState.HANDOFF_COMPLETE: "dim",
    AgentState.ENDED: "dim",
    AgentState.PAUSED: "cyan",
}
# Event kinds that change what the agents hold: marked in timelines and listed as recent.
LIFECYCLE_KINDS = frozenset(
    {
        Kind.LIFECYCLE,
        Kind.COMPRESSION,
        Kind.COMPACTION,
        Kind.HANDOFF,
        Kind.HOOK_PRE_COMPACT,
        Kind.POOL_PRESSURE,
        Kind.SUMMARY,
    }
)
GAUGE_WIDTH = 10
# Session names up to this long are shown whole in narrow columns.
SHORT_NAME = 20


def fill_style(pct: float | None, state: str | None = None, thresholds: Thresholds | None = None) -> str:
    """The gauge's colour: the agent's state when it says so, else the fill against the thresholds."""
    if state in (AgentState.CRITICAL, AgentState.ERROR):
        return "red"
    if state in (AgentState.WARNING, AgentState.HANDOFF_PENDING):
        return "yellow"
    warning, critical = (thresholds["warning_pct"], thresholds["critical_pct"]) if thresholds else (75.0, 90.0)
    if pct is not None and pct >= critical:
        return "red"
    if pct is not None and pct >= warning:
        return "yellow"
    return "green"


def fill_gauge(pct: float | None, style: str) -> Text:
    """``██████░░░░  62%``: the bar carries the colour, the figure stays readable without it."""
    if pct is None:
        return Text("░" * GAUGE_WIDTH + "    -", style="dim")
    filled = max(0, min(GAUGE_WIDTH, round(pct / 100 * GAUGE_WIDTH)))
    gauge = Text("█" * filled, style=style)
    gauge.append("░" * (GAUGE_WIDTH - filled), style="dim")
    gauge.append(f" {pct:4.0f}%")
    return gauge


def styled_state(state: str | None) -> Text:
    return Text(state or "-", style=STATE_STYLES.get(state or "", ""))


class Banner(Static):
    """Says the daemon is gone while it is; hidden otherwise."""

    def on_mount(self) -> None:
        self.watch(self.app, "offline", self._show)

    def _show(self, offline: str) -> None:
        self.update(offline)
        self.display = bool(offline)


class Dashboard(Protocol):
    """What a screen uses of the app (:class:`toka_cli.tui.app.TokaApp`): its connection to the
    daemon and what the live feed brought. The screens know the app by this alone, so that they
    need not import the app that lists them."""

    client: AsyncClient | None
    listeners: set[TokaScreen]  # told of (re)connections and of each live event
    status: dict[str, Any]  # the daemon's status, its event count kept up by the feed
    recent: deque[dict[str, Any]]  # the latest lifecycle events, newest first

    async def call(self, op: str, **args: Any) -> Any: ...

    def events_per_second(self) -> float: ...

    def today(self) -> date: ...

    def open_session(self, session: str, at_seq: int | None = None) -> None: ...


class TokaScreen(Screen[None]):
    """A screen that reads from the daemon: reloaded on (re)connect, told of each live event."""

    @property
    def toka(self) -> Dashboard:
        return cast("Dashboard", self.app)

    # The tab this screen is (toka_cli.tui.chrome.TABS).
    TAB = ""

    def compose_top(self) -> ComposeResult:
        """The tab bar and the offline banner, at the top of every screen."""
        yield TabBar(self.TAB)
        yield Banner(id="banner")

    def compose_keys(self) -> ComposeResult:
        yield KeyBar(compact=True)

    def on_mount(self) -> None:
        self.toka.listeners.add(self)
        if self.toka.client is not None:
            self.reload()

    def on_unmount(self) -> None:
        self.toka.listeners.discard(self)

    @property
    def gone(self) -> bool:
        """True once the screen was closed: a worker's answer that arrives later has nowhere to go."""
        return not self.is_attached

    def reload(self) -> None:
        """Read what the screen shows again (in a worker)."""

    def live_event(self, event: Event) -> None:
        """An event that just committed, from the app's subscription."""

    def show_error(self, error: TokaError, title: str = "error") -> None:
        from toka_cli.tui.modals import ErrorScreen

        self.app.push_screen(ErrorScreen(error.message, error.hint, title=title))

    @work(group="action")
    async def act(self, question: str | None, op: str, args: dict[str, Any], done: Callable[[Any], str | None]) -> None:
        """Ask first when ``question`` is given, call ``op``, then say what happened or show the error."""
        from toka_cli.tui.modals import ConfirmScreen

        if question is not None and not await self.app.push_screen_wait(ConfirmScreen(question)):
            return
        try:
            result = await self.toka.call(op, **args)
        except TokaError as error:
            self.show_error(error, title=f"{op} failed")
            return
        if self.gone:
            return
        message = done(result)
        if message:
            self.notify(message)
        self.reload()


def refill(table: DataTable[Any], rows: Sequence[tuple[str, Sequence[str | Text]]], keep_cursor: bool = True) -> None:
    """Replace ``table``'s rows (key, cells), its columns as wide as their widest cell.

    The widths are set here rather than left to the table, which measures new rows only when it
    is next idle: on a busy machine that can be seconds, and meanwhile every column is cut to
    its label's width.
    """
    labels = [(column.key, column.label) for column in table.columns.values()]
    widths = [label.cell_len for _, label in labels]
    for _, cells in rows:
        for index, cell in enumerate(cells):
            widths[index] = max(widths[index], cell.cell_len if isinstance(cell, Text) else Text(cell).cell_len)
    keep = table.cursor_row
    table.clear(columns=True)
    for (key, label), width in zip(labels, widths, strict=True):
        table.add_column(label, width=width, key=key.value)
    for row_key, cells in rows:
        table.add_row(*cells, key=row_key)
    if keep_cursor and table.row_count:
        table.move_cursor(row=min(keep, table.row_count - 1))


def short_names(sessions: set[str]) -> dict[str, str]:
    """Each session name as it fits a narrow column: whole up to SHORT_NAME characters, else its
    shortest prefix of at least 8 that no other has, with an ellipsis (a uuid is told apart by
    its first 8 characters, and the text beside it gets the width the whole id would take)."""
    names = {}
    for session in sessions:
        length = 8
        while length < len(session) and any(o != session and o.startswith(session[:length]) for o in sessions):
            length += 1
        names[session] = session if len(session) <= max(SHORT_NAME, length) else session[:length] + "…"
    return names
