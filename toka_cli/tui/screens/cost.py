"""Cost: today's cost, Claude's active 5-hour block with its burn rate and projection, Codex's limit
windows as bars (used, reset, when they run out at the burn rate), and each agent's share of
today, kept current from the app's subscription (a usage event brings a new summary
from the daemon, `cost.summary`) and a timer (the time left runs down without usage)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType
from textual.timer import Timer
from textual.widgets import DataTable, Label, Static

from daemon.client.zone import local_timezone
from daemon.contract.kinds import Kind
from store.errors import TokaError
from toka_cli.block_views import local, window_name, window_words, zone
from toka_cli.cost_views import compact, dollars
from toka_cli.tui.chrome import Table
from toka_cli.tui.widgets import TokaScreen, fill_gauge

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from daemon.contract.results import Event

# Usage that arrives together is shown once: the summary is asked for this long after the first.
SETTLE_S = 0.3
# The longest between two summaries, for the block's time left.
REFRESH_S = 30.0


class CostScreen(TokaScreen):
    TAB = "cost"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("g", "refresh", "Refresh", id="cost.refresh"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.timezone = local_timezone()
        self.summary: dict[str, Any] | None = None
        self._settling: Timer | None = None
        self.today = Static("connecting to the daemon…", id="cost-today")
        self.block = Static("", id="cost-block")
        self.codex = Static("", id="cost-codex")
        self.agents: DataTable[Any] = Table(id="cost-agents", cursor_type="row", zebra_stripes=True)
        self.agents.add_columns("agent", "source", "calls", "tokens", "cost")

    def compose(self) -> ComposeResult:
        yield from self.compose_top()
        yield Label("Today", classes="section")
        yield self.today
        yield Label("Claude's 5-hour block", classes="section")
        yield self.block
        yield Label("Codex's limits", classes="section")
        yield self.codex
        yield Label("Agents today", classes="section")
        yield self.agents
        yield from self.compose_keys()

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(REFRESH_S, self.reload)

    def reload(self) -> None:
        self._load()

    def action_refresh(self) -> None:
        self._load()

    def live_event(self, event: Event) -> None:
        if event["kind"] == Kind.USAGE and self._settling is None:
            self._settling = self.set_timer(SETTLE_S, self._settled)

    def _settled(self) -> None:
        self._settling = None
        self._load()

    @work(exclusive=True, group="cost")
    async def _load(self) -> None:
        try:
            summary: dict[str, Any] = await self.toka.call("cost.summary", timezone=self.timezone)
        except TokaError as error:
            self.today.update(Text(f"no figures: {error.message}", style="dim"))
            return
        if self.gone:
            return
        self.summary = summary
        self._show(summary)

    def _show(self, summary: dict[str, Any]) -> None:
        today = summary["today"]
        self.today.update(
            f"{dollars(today)} · {compact(today['total_tokens'])} tokens · {today['calls']:,} calls"
            f" · {summary['timezone']} · prices {summary['prices']['table']}"
        )
        self.block.update(_block(summary["block"], summary["timezone"]))
        self.codex.update(_plan(summary.get("codex"), summary["timezone"], summary["now"]))
        self.agents.clear()
        for agent in summary["agents"]:
            name = f"{agent['session']}/{agent['agent'] or '-'}"
            self.agents.add_row(
                name, agent["source"], f"{agent['calls']:,}", compact(agent["total_tokens"]), dollars(agent)
            )


def _block(block: dict[str, Any] | None, timezone: str) -> Text:
    if block is None:
        return Text("no active block", style="dim")
    where = zone(timezone)
    start, end = local(block["start"], where), local(block["end"], where)
    minutes = int(block["remaining_minutes"] or 0)
    line = Text(f"{start:%H:%M}–{end:%H:%M}, {minutes // 60}h {minutes % 60:02d}m left · ")
    line.append(f"{dollars(block)} · {compact(block['total_tokens'])} tokens")
    burn, projected = block["burn_rate"], block["projection"]
    if burn is not None:
        per_hour = "" if burn["cost_per_hour"] is None else f", ${burn['cost_per_hour']:,.2f}/h"
        line.append(f"\nburn rate {compact(round(burn['tokens_per_minute']))} tokens/min{per_hour}")
    if projected is not None:
        cost = "" if projected["cost_usd"] is None else f", ${projected['cost_usd']:,.2f}"
        line.append(f" · at {end:%H:%M}: {compact(projected['total_tokens'])} tokens{cost}")
    shares = [p for p in (block["limits"]["cost_pct"], block["limits"]["token_pct"]) if p is not None]
    if shares:
        used = max(shares)
        line.append("\nlimit ")
        line.append_text(fill_gauge(used, "red" if used >= 100 else "yellow" if used >= 75 else "green"))
    return line


def _plan(codex: dict[str, Any] | None, timezone: str, now: str) -> Text:
    """Each of Codex's windows: a bar of its use, when it resets, when it runs out at its burn rate."""
    if not codex:
        return Text("no Codex limits read", style="dim")
    where = zone(timezone)
    lines = Text()
    for number, window in enumerate(codex["windows"]):
        used = window["used_pct"]
        if number:
            lines.append("\n")
        lines.append(f"{window_name(window):>7} ")
        style = "dim" if window["reset"] else "red" if used >= 90 else "yellow" if used >= 75 else "green"
        lines.append_text(fill_gauge(used, style))
        resets, runs_out = window_words(window, where, local(now, where))
        lines.append(f"  {resets}" + (f"\n{'':8}{runs_out}" if runs_out else ""))
    return lines
