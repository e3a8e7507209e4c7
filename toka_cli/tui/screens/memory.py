"""Memory: the pool's figures and the memory's entries."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Label, Static

from daemon.contract.kinds import Kind
from store.errors import TokaError
from toka_cli.render import day_ts, size
from toka_cli.tui.chrome import Table
from toka_cli.tui.widgets import TokaScreen, fill_gauge

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from daemon.contract.results import Event, MemoryList, PoolStats


class MemoryScreen(TokaScreen):
    TAB = "memory"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("g", "refresh", "Refresh", id="memory.refresh"),
    ]

    def compose(self) -> ComposeResult:
        yield from self.compose_top()
        yield Label("Pool", classes="section")
        yield Static("", id="pool")
        yield Label("Context store", classes="section")
        table: DataTable[Any] = Table(id="entries", cursor_type="row", zebra_stripes=True)
        table.add_columns("scope", "key", "version", "pinned", "set", "value")
        yield table
        yield from self.compose_keys()

    def reload(self) -> None:
        self._load()

    def action_refresh(self) -> None:
        self._load()

    def live_event(self, event: Event) -> None:
        if event["kind"].startswith("memory.") or event["kind"] == Kind.POOL_PRESSURE:
            self._load()

    @work(exclusive=True, group="memory")
    async def _load(self) -> None:
        try:
            pool: PoolStats = await self.toka.call("pool.stats")
            listed: MemoryList = await self.toka.call("memory.list")
        except TokaError as error:
            self.show_error(error)
            return
        if self.gone:
            return
        style = {"warning": "yellow", "critical": "red"}.get(pool["level"], "green")
        line = Text("fill ")
        line.append_text(fill_gauge(pool["fill_pct"], style))
        line.append(f"  {pool['level']} · {size(pool['used_bytes'])} of {size(pool['capacity_bytes'])}")
        line.append(f" · {pool['entries']:,} entries")
        line.append(f"\nhits {pool['gets']['hits']:,} · misses {pool['gets']['misses']:,}")
        line.append(f" · evicted {pool['evictions']['lru']:,} lru, {pool['evictions']['expired']:,} expired")
        self.query_one("#pool", Static).update(line)
        table: DataTable[Any] = self.query_one("#entries", DataTable)
        table.clear()
        today = self.toka.today()
        for entry in listed["entries"]:
            value = json.dumps(entry["value"], ensure_ascii=False)
            table.add_row(
                entry["scope"],
                entry["key"],
                str(entry["version"]),
                "yes" if entry.get("pinned") else "",
                day_ts(entry["set_ts"], today),
                value if len(value) <= 60 else value[:59] + "…",
            )
