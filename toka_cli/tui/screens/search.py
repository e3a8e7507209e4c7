"""Search: full-text over the log; a hit opens its session at that event."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, Header, Input

from daemon.client.results import MARK_END, MARK_START
from store.errors import TokaError
from toka_cli.render import short_ts
from toka_cli.tui.widgets import TokaScreen

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from daemon.client.results import SearchHit, SearchResult

# Hits asked for: the daemon's own ceiling.
HITS = 200


class SearchScreen(TokaScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_query", "Query", key_display="/", id="search.query"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.hits: dict[str, SearchHit] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        yield from self.compose_banner()
        yield Input(placeholder='search the log: words, "a phrase", pre*, AND/OR/NOT', id="query")
        table: DataTable[Any] = DataTable(id="hits", cursor_type="row", zebra_stripes=True)
        table.add_columns("seq", "time", "session", "kind", "snippet")
        yield table
        yield Footer(compact=True)

    def action_focus_query(self) -> None:
        self.query_one("#query", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self._search(event.value.strip())

    @work(exclusive=True, group="search")
    async def _search(self, query: str) -> None:
        try:
            found: SearchResult = await self.toka.call("search", query=query, limit=HITS)
        except TokaError as error:
            self.show_error(error, title="search failed")
            return
        if self.gone:
            return
        table: DataTable[Any] = self.query_one("#hits", DataTable)
        table.clear()
        self.hits = {}
        hits = found["hits"]
        for hit in hits:
            key = str(hit["seq"])
            self.hits[key] = hit
            snippet = " ".join(hit["snippet"].replace(MARK_START, "«").replace(MARK_END, "»").split())
            table.add_row(str(hit["seq"]), short_ts(hit["ts"]), hit["session"], hit["kind"], snippet, key=key)
        if hits:
            table.focus()
        else:
            self.notify(f"no events match {query}")

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        hit = self.hits.get(str(event.row_key.value))
        if hit is not None:
            from toka_cli.tui.screens.session import SessionScreen

            self.app.push_screen(SessionScreen(hit["session"], at_seq=hit["seq"]))
