"""The overview: agents with their fill (the live ones; `e` shows the ended too), sessions, the
daemon's figures and recent lifecycle events."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Label, Static

from store.errors import TokaError
from toka_cli.gists import gist
from toka_cli.render import day_ts
from toka_cli.tui.chrome import Table
from toka_cli.tui.notices import changed_state, compressed, handed_off, verified
from toka_cli.tui.widgets import (
    LIFECYCLE_KINDS,
    TokaScreen,
    fill_gauge,
    fill_style,
    refill,
    short_names,
    styled_state,
)

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from daemon.contract.results import (
        Agent,
        AgentList,
        Event,
        PoolStats,
        Session,
        SessionList,
        VerifyReport,
    )

# How many recent lifecycle events the overview lists.
RECENT_ROWS = 20


class OverviewScreen(TokaScreen):
    TAB = "overview"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_session", "Open", id="overview.open", show=False),
        Binding("c", "compress", "Compress", id="overview.compress"),
        Binding("h", "handoff", "Handoff", id="overview.handoff"),
        Binding("v", "verify", "Verify", id="overview.verify", show=False),
        Binding("p", "pause", "Pause/resume", id="overview.pause"),
        Binding("t", "terminate", "Terminate", id="overview.terminate"),
        Binding("e", "toggle_ended", "Ended agents", id="overview.ended", show=False),
        Binding("g", "refresh", "Refresh", id="overview.refresh", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._agents_stale = False
        self._sessions_stale = False
        self.pool: PoolStats | None = None
        self.agent_states: dict[str, str] = {}
        self.listed_agents: list[Agent] = []
        self.show_ended = False  # the agents that no longer run (ENDED, TERMINATED) shown too
        self.agents_label = Label("Agents", classes="section", id="agents-label")
        self._loading = False  # a _load is under way
        # Held here rather than queried: a timer or a worker may still run while the screen
        # is being taken down, when its children can no longer be found.
        self.status_line = Static("connecting to the daemon…", id="status")
        self.agents: DataTable[Any] = Table(id="agents", cursor_type="row", zebra_stripes=True)
        self.agents.add_columns("state", "fill", "agent", "window", "model")
        self.sessions: DataTable[Any] = Table(id="sessions", cursor_type="row", zebra_stripes=True)
        self.sessions.add_columns("session", "fill", "events", "last event", "model")
        self.recent: DataTable[Any] = Table(id="recent", cursor_type="row", show_header=False)
        self.recent.add_columns("time", "kind", "what", "session")

    def compose(self) -> ComposeResult:
        yield from self.compose_top()
        yield self.status_line
        yield self.agents_label
        yield self.agents
        yield Label("Sessions", classes="section")
        yield self.sessions
        yield Label("Recent lifecycle", classes="section")
        yield self.recent
        yield from self.compose_keys()

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(1.0, self._tick)

    def reload(self) -> None:
        self._load(agents=True, sessions=True)

    def live_event(self, event: Event) -> None:
        self._sessions_stale = True
        if event["kind"] in LIFECYCLE_KINDS or event["kind"].startswith(("usage", "agent")):
            self._agents_stale = True
            self._show_recent()

    def _tick(self) -> None:
        """Once a second: the rate, and the lists the live events made stale (one read however many arrived)."""
        self._show_status()
        # A load under way is left to finish (a new one would cancel it, and on a slow machine
        # every load would be cancelled before it showed anything); what went stale meanwhile
        # is read at the next tick after it.
        if self._loading:
            return
        if self.toka.client is not None and (self._agents_stale or self._sessions_stale):
            self._load(agents=self._agents_stale, sessions=self._sessions_stale)
            self._agents_stale = self._sessions_stale = False

    @work(exclusive=True, group="overview")
    async def _load(self, agents: bool, sessions: bool) -> None:
        self._loading = True
        try:
            await self._read(agents, sessions)
        finally:
            self._loading = False

    async def _read(self, agents: bool, sessions: bool) -> None:
        try:
            if agents:
                listed_agents: AgentList = await self.toka.call("agents.list")
                self._show_agents(listed_agents["agents"])
            if sessions:
                listed_sessions: SessionList = await self.toka.call("sessions.list")
                self._show_sessions(listed_sessions["sessions"])
                self.toka.status = await self.toka.call("status")
            self.pool = await self.toka.call("pool.stats")
        except TokaError:
            return  # the banner says the daemon is away; the connection worker reloads on return
        if self.gone:
            return
        self._show_status()
        self._show_recent()

    def _show_status(self) -> None:
        status = self.toka.status
        if status is None:
            return
        pool = self.pool
        pool_text = f"pool {pool['fill_pct']:.0f}% {pool['level']}" if pool else "pool -"
        pool_style = {"warning": "yellow", "critical": "bold red"}.get(pool["level"], "") if pool else ""
        line = Text(f"toka {status['version']} · ")
        line.append(f"events {status['events']:,} · sessions {status['sessions']:,}")
        line.append(f" · clients {status['clients']} · ")
        line.append(pool_text, style=pool_style)
        line.append(f" · {self.toka.events_per_second():.1f} ev/s")
        self.status_line.update(line)

    def action_toggle_ended(self) -> None:
        """Show the agents that no longer run, or hide them again."""
        self.show_ended = not self.show_ended
        self._show_agents(self.listed_agents)

    def _show_agents(self, agents: list[Agent]) -> None:
        self.listed_agents = agents
        ended = sum(1 for agent in agents if not agent.get("live", True))
        if not self.show_ended:
            agents = [agent for agent in agents if agent.get("live", True)]
        if ended:
            shown = "shown, e hides them" if self.show_ended else "e shows them"
            self.agents_label.update(f"Agents · {ended} ended ({shown})")
        else:
            self.agents_label.update("Agents")
        self.agent_states = {agent["id"]: agent.get("state") or "" for agent in agents}
        rows = []
        for agent in agents:
            style = fill_style(agent.get("fill_pct"), agent.get("state"), agent.get("thresholds"))
            cells = (
                styled_state(agent.get("state")),
                fill_gauge(agent.get("fill_pct"), style),
                agent["id"],
                f"{agent['context_window']:,}" if agent.get("context_window") else "-",
                agent.get("model") or "-",
            )
            rows.append((agent["id"], cells))
        refill(self.agents, rows)

    def _show_sessions(self, sessions: list[Session]) -> None:
        rows = []
        today = self.toka.today()
        for session in sessions:
            pct = session.get("fill_pct")
            cells = (
                session["session"],
                fill_gauge(pct, fill_style(pct)),
                f"{session['events']:,}",
                day_ts(session["last_ts"], today) if session.get("last_ts") else "-",
                session.get("model") or "-",
            )
            rows.append((session["session"], cells))
        refill(self.sessions, rows)

    def _show_recent(self) -> None:
        today = self.toka.today()
        rows = []
        recent = list(self.toka.recent)[:RECENT_ROWS]
        names = short_names({event["session"] for event in recent})
        for number, event in enumerate(recent):
            what = gist(event["kind"], event["payload"], 80)
            rows.append((str(number), (day_ts(event["ts"], today), event["kind"], what, names[event["session"]])))
        refill(self.recent, rows, keep_cursor=False)

    def _selected(self, table: DataTable[Any]) -> str | None:
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return str(key) if key is not None else None

    def _target_session(self) -> str | None:
        """The session an action is for: the sessions table's cursor."""
        session = self._selected(self.sessions)
        if session is None:
            self.notify("no session selected", severity="warning")
        return session

    def _target_agent(self) -> str | None:
        agent = self._selected(self.agents)
        if agent is None:
            self.notify("no agent selected", severity="warning")
        return agent

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "sessions" and event.row_key.value is not None:
            self._open(str(event.row_key.value))

    def action_open_session(self) -> None:
        session = self._selected(self.sessions)
        if session is not None:
            self._open(session)

    def _open(self, session: str) -> None:
        self.toka.open_session(session)

    def action_refresh(self) -> None:
        self._load(agents=True, sessions=True)

    def action_compress(self) -> None:
        if (session := self._target_session()) is not None:
            self.act(f"Compress session {session}?", "compress", {"session": session}, compressed)

    def action_handoff(self) -> None:
        if (session := self._target_session()) is not None:
            self.act(f"Create a handoff for session {session}?", "handoffs.create", {"target": session}, handed_off)

    def action_verify(self) -> None:
        self.act(None, "verify", {}, self._verified)

    def _verified(self, report: VerifyReport) -> str | None:
        return verified(self, report)

    def action_pause(self) -> None:
        """Pause the agent under the cursor, or resume it when it is paused."""
        if (agent := self._target_agent()) is None:
            return
        if self.agent_states.get(agent) == "PAUSED":
            self.act(f"Resume agent {agent}?", "agents.resume", {"agent": agent}, changed_state)
        else:
            self.act(f"Pause agent {agent}?", "agents.pause", {"agent": agent}, changed_state)

    def action_terminate(self) -> None:
        if (agent := self._target_agent()) is not None:
            self.act(f"Terminate agent {agent}?", "agents.terminate", {"agent": agent}, changed_state)
