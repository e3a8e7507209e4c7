"""Handoffs: the list, the chain of the selected one's trace, and its document as Markdown."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Markdown, Static

from daemon.contract.kinds import Kind
from store.errors import TokaError
from toka_cli.render import day_ts, percent
from toka_cli.tui.chrome import Table
from toka_cli.tui.widgets import TokaScreen

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from daemon.contract.results import Event, Handoff, HandoffChain, HandoffList, HandoffSummary


class HandoffsScreen(TokaScreen):
    TAB = "handoffs"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "copy_prompt", "Copy prompt", id="handoffs.copy"),
        Binding("g", "refresh", "Refresh", id="handoffs.refresh"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.prompt: str | None = None
        self.shown: str | None = None
        self.rendered: str | None = None  # the handoff whose document the Markdown widget holds

    def compose(self) -> ComposeResult:
        yield from self.compose_top()
        table: DataTable[Any] = Table(id="handoffs", cursor_type="row", zebra_stripes=True)
        table.add_columns("id", "time", "trace", "from", "to", "reason", "fill", "active")
        yield table
        yield Static("", id="handoff-chain")
        with VerticalScroll(id="handoff-doc-box"):
            yield Markdown("Select a handoff to read its document.", id="handoff-doc")
        yield from self.compose_keys()

    def reload(self) -> None:
        self._load()

    def live_event(self, event: Event) -> None:
        if event["kind"] == Kind.HANDOFF:
            self._load()

    def action_refresh(self) -> None:
        self._load()

    @work(exclusive=True, group="handoffs")
    async def _load(self) -> None:
        try:
            listed: HandoffList = await self.toka.call("handoffs.list")
        except TokaError as error:
            self.show_error(error)
            return
        if self.gone:
            return
        table: DataTable[Any] = self.query_one("#handoffs", DataTable)
        table.clear()
        handoffs = listed["handoffs"]
        today = self.toka.today()
        for handoff in reversed(handoffs) if _oldest_first(handoffs) else handoffs:
            table.add_row(
                handoff["id"][:12],
                day_ts(handoff["ts"], today),
                handoff.get("trace") or "-",
                handoff.get("predecessor") or handoff["session"],
                handoff.get("successor") or "-",
                handoff.get("reason") or "by hand",
                percent(handoff.get("fill_pct")),
                "yes" if handoff.get("active") else "",
                key=handoff["id"],
            )

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None and event.row_key.value != self.shown:
            self._show(str(event.row_key.value))

    @work(exclusive=True, group="handoff-doc")
    async def _show(self, handoff_id: str) -> None:
        try:
            handoff: Handoff = await self.toka.call("handoffs.get", id=handoff_id)
        except TokaError as error:
            self.show_error(error)
            return
        if self.gone:
            return
        self.shown = handoff_id
        self.prompt = handoff.get("prompt")
        await self.query_one("#handoff-doc", Markdown).update(handoff["markdown"])
        self.rendered = handoff_id
        if handoff.get("trace"):
            try:
                chain: HandoffChain = await self.toka.call("handoffs.chain", trace=handoff["trace"])
            except TokaError:
                return  # a trace of agents no longer known: the document stands on its own
            if not self.gone:
                self.query_one("#handoff-chain", Static).update(chain_line(chain))

    def action_copy_prompt(self) -> None:
        if self.prompt is None:
            self.notify("select a handoff first", severity="warning")
            return
        self.app.copy_to_clipboard(self.prompt)
        self.notify("continuation prompt copied")


def chain_line(chain: HandoffChain) -> str:
    """``trace pay: billing-v1-9063 (TERMINATED) -> billing-v2-c4ce (ACTIVE)``, or the handoffs'
    own ends when the trace's agents are not spawned ones."""
    agents = [f"{a['id']} ({a['state']})" for a in chain["agents"]]
    if not agents:
        ends = [h["predecessor"] for h in chain["handoffs"]] + [chain["handoffs"][-1]["successor"] or "…"]
        agents = [str(end) for end in ends]
    return f"trace {chain['trace']}: " + " -> ".join(agents)


def _oldest_first(handoffs: list[HandoffSummary]) -> bool:
    return len(handoffs) > 1 and handoffs[0]["seq"] < handoffs[-1]["seq"]
