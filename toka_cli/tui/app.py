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
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.reactive import reactive

from daemon.client.aio import AsyncClient
from store.errors import DaemonUnavailable, TokaError
from toka_cli.tui.modals import HelpScreen
from toka_cli.tui.screens.cost import CostScreen
from toka_cli.tui.screens.handoffs import HandoffsScreen
from toka_cli.tui.screens.memory import MemoryScreen
from toka_cli.tui.screens.overview import OverviewScreen
from toka_cli.tui.screens.search import SearchScreen
from toka_cli.tui.widgets import LIFECYCLE_KINDS

if TYPE_CHECKING:
    from daemon.client.results import Event, EventsPage, Status
    from daemon.paths import Paths
    from toka_cli.tui.widgets import TokaScreen

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
    # The footer needs the width for toka's own keys at 80 columns.
    ENABLE_COMMAND_PALETTE = False
    MODES: ClassVar[dict[str, Any]] = {
        "overview": OverviewScreen,
        "handoffs": HandoffsScreen,
        "search": SearchScreen,
        "memory": MemoryScreen,
        "cost": CostScreen,
    }
    DEFAULT_MODE = "overview"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "switch_mode('overview')", "Overview", id="app.overview", show=False),
        Binding("2", "switch_mode('handoffs')", "Handoffs", id="app.handoffs", show=False),
        Binding("3", "switch_mode('search')", "Search", id="app.search", show=False),
        Binding("4", "switch_mode('memory')", "Memory", id="app.memory", show=False),
        Binding("5", "switch_mode('cost')", "Cost", id="app.cost", show=False),
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("q", "quit", "Quit", id="app.quit"),
    ]

    offline: reactive[str] = reactive("")

    def __init__(self, paths: Paths | None = None) -> None:
        super().__init__()
        self.paths = paths
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

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        shown = [
            (active.binding.key_display or self.get_key_display(active.binding), active.binding.description)
            for active in self.screen.active_bindings.values()
            if active.binding.id and active.binding.description
        ]
        self.push_screen(HelpScreen(shown))
