"""The dashboard app: one connection to the daemon, one subscription feeding every screen.

The connection lives in a worker that retries while the daemon is away: the first attempt
starts the daemon as the CLI does, later ones only wait for it to come back, so a daemon
stopped on purpose is not restarted behind the user's back.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import deque
from datetime import UTC, date, datetime
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.reactive import reactive

from daemon.client.aio import AsyncClient
from store.errors import DaemonUnavailable, TokaError
from toka_cli.render import local_day
from toka_cli.tui.chrome import TABS
from toka_cli.tui.screens.overview import OverviewScreen
from toka_cli.tui.widgets import LIFECYCLE_KINDS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from textual.screen import Screen

    from daemon.contract.results import Event, EventsPage, Status
    from daemon.paths import Paths
    from toka_cli.tui.screens.session import SessionScreen
    from toka_cli.tui.widgets import TokaScreen


def _handoffs() -> Screen[None]:
    # Each screen but the first is imported when it first opens: the handoffs screen brings
    # Markdown (markdown_it), which would otherwise delay the first frame.
    from toka_cli.tui.screens.handoffs import HandoffsScreen

    return HandoffsScreen()


def _search() -> Screen[None]:
    from toka_cli.tui.screens.search import SearchScreen

    return SearchScreen()


def _memory() -> Screen[None]:
    from toka_cli.tui.screens.memory import MemoryScreen

    return MemoryScreen()


def _cost() -> Screen[None]:
    from toka_cli.tui.screens.cost import CostScreen

    return CostScreen()


# Seconds between attempts to reach a daemon that went away.
RETRY_S = 1.0
# Events per second are counted over this many seconds, so a burst reads as a rate, not a spike.
RATE_WINDOW_S = 5.0
# Set to make the app print a marker and exit once its first screen is drawn (benchmarks/bench_tui.py).
FIRST_FRAME_ENV = "TOKA_TUI_FIRST_FRAME"
FIRST_FRAME_MARKER = b"toka-tui: first frame\n"


class TokaApp(App[None]):
    CSS_PATH = "toka.tcss"
    TITLE = "toka"
    MODES: ClassVar[dict[str, Any]] = {
        "overview": OverviewScreen,
        "handoffs": _handoffs,
        "search": _search,
        "memory": _memory,
        "cost": _cost,
        "session": "session",  # installed when a session is first opened
    }
    DEFAULT_MODE = "overview"
    # One meaning per key on every screen (docs/tui.md lists them): the screens' own keys never
    # reuse these, nor each other's.
    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(key, f"open_tab('{mode}')", label, id=f"app.{mode}", show=False) for mode, key, label in TABS),
        Binding("slash", "find", "Search", key_display="/", id="app.find", show=False),
        Binding("question_mark", "help", "Help", key_display="?", id="app.help"),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]

    offline: reactive[str] = reactive("")
    session_name: reactive[str] = reactive("")  # the session last opened, named in the tab bar

    def __init__(self, paths: Paths | None = None, clock: Callable[[], datetime] | None = None) -> None:
        super().__init__()
        self.paths = paths
        self.clock = clock or (lambda: datetime.now(UTC))
        self.came_from = "overview"  # where `escape` goes back to from a session
        self.client: AsyncClient | None = None
        self.listeners: set[TokaScreen] = set()
        self.status: Status | None = None
        self.recent: deque[Event] = deque(maxlen=50)
        self._arrivals: deque[float] = deque()

    def on_mount(self) -> None:
        if os.environ.get(FIRST_FRAME_ENV):
            self.call_after_refresh(self._first_frame)
            return
        self.stay_connected()

    def _first_frame(self) -> None:
        os.write(2, FIRST_FRAME_MARKER)
        self.exit()

    async def call(self, op: str, **args: Any) -> Any:
        """One request to the daemon; DaemonUnavailable while it is away."""
        if self.client is None:
            raise DaemonUnavailable("the daemon is not connected", "toka tui reconnects as soon as it is back")
        return await self.client.call(op, **args)

    @work(exclusive=True, group="connection")
    async def stay_connected(self) -> None:
        autostart = True
        while True:
            client = AsyncClient(self.paths, autostart=autostart)
            try:
                await client.connect()
                self.client = client
                self.status = await client.call("status")
                recent: EventsPage = await client.call(
                    "events.query", kinds=sorted(LIFECYCLE_KINDS), order="desc", limit=50
                )
                self.recent = deque(recent["events"], maxlen=50)
                self.offline = ""
                for screen in list(self.listeners):
                    screen.reload()
                async for event in client.subscribe():
                    self.live_event(event)
                raise DaemonUnavailable("the subscription ended")
            except TokaError as error:
                self.offline = f" daemon unreachable: {error.message} (retrying every {RETRY_S:g}s)"
            finally:
                self.client = None
                await client.close()
            autostart = False
            await asyncio.sleep(RETRY_S)

    def live_event(self, event: Event) -> None:
        now = time.monotonic()
        self._arrivals.append(now)
        if self.status is not None:
            self.status["events"] += 1
        if event["kind"] in LIFECYCLE_KINDS:
            self.recent.appendleft(event)
        for screen in list(self.listeners):
            screen.live_event(event)

    def events_per_second(self) -> float:
        horizon = time.monotonic() - RATE_WINDOW_S
        while self._arrivals and self._arrivals[0] < horizon:
            self._arrivals.popleft()
        return len(self._arrivals) / RATE_WINDOW_S

    def today(self) -> date:
        """The day times are compared with: a time of another day is shown with its date."""
        return local_day(self.clock())

    def open_session(self, session: str, at_seq: int | None = None) -> None:
        """Show ``session`` (at ``at_seq``) on the session tab, one screen made once and reused."""
        from toka_cli.tui.screens.session import SessionScreen

        if self.current_mode != "session":
            self.came_from = self.current_mode
        if not self.is_screen_installed("session"):
            self.install_screen(SessionScreen(), "session")
        screen = cast("SessionScreen", self.get_screen("session"))
        self.session_name = session
        if screen.is_attached and self.client is not None:
            # Built already: switch once its rows are in, so the screen is drawn once, with them.
            screen.show(session, at_seq, then=lambda: self.switch_mode("session"))
        else:
            screen.show(session, at_seq)
            self.switch_mode("session")

    def action_open_tab(self, mode: str) -> None:
        if mode == "session" and not self.is_screen_installed("session"):
            self.notify("no session open yet: press enter on one in Overview or Search")
            return
        if mode != self.current_mode:
            self.switch_mode(mode)

    def action_leave_session(self) -> None:
        self.switch_mode(self.came_from)

    def action_find(self) -> None:
        """`/` on any screen: to Search, with the cursor in its query."""
        self.switch_mode("search")
        self.call_after_refresh(lambda: self.screen.run_action("focus_query"))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The command palette (ctrl+p): the tabs, then this screen's actions, then Textual's own."""
        for mode, key, label in TABS:
            switch = partial(self.action_open_tab, mode)
            yield SystemCommand(f"{label} ({key})", f"switch to the {label.lower()} tab", switch)
        for active in screen.active_bindings.values():
            binding = active.binding
            if binding.id and binding.description and not binding.id.startswith("app."):
                help_text = f"key {binding.key_display or self.get_key_display(binding)}"
                run = partial(self.run_action, binding.action, active.node)
                yield SystemCommand(binding.description, help_text, run)
        yield from super().get_system_commands(screen)

    def action_help(self) -> None:
        from toka_cli.tui.modals import HelpScreen

        if isinstance(self.screen, HelpScreen):
            return
        shown = [
            (active.binding.key_display or self.get_key_display(active.binding), active.binding.description)
            for active in self.screen.active_bindings.values()
            if active.binding.id and active.binding.description
        ]
        self.push_screen(HelpScreen(shown))
