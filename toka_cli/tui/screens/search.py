"""Search: full-text over the log; a hit opens its session at that event."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Input

from daemon.contract.results import MARK_END, MARK_START
from store.errors import TokaError
from toka_cli.render import day_ts
from toka_cli.tui.chrome import Table
from toka_cli.tui.widgets import TokaScreen, short_names

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from daemon.contract.results import SearchHit, SearchResult

# Hits asked for: the daemon's own ceiling.
HITS = 200
HEADERS = ("seq", "time", "session", "kind", "snippet")
MIN_SNIPPET = 30


class QueryBox(Input):
    """The query: while it has the cursor, printable keys (digits and q too) are typed into it (an
    Input consumes them before any binding); escape leaves it for the hits, where they are keys again."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Leave the query", id="search.leave_query", show=False),
    ]

    def action_leave(self) -> None:
        self.screen.query_one("#hits", DataTable).focus()


class SearchScreen(TokaScreen):
    TAB = "search"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_query", "Query", key_display="/", id="search.query"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.hits: dict[str, SearchHit] = {}
        self.found: list[SearchHit] = []

    def compose(self) -> ComposeResult:
        yield from self.compose_top()
        yield QueryBox(placeholder="search the log: words, paths, names, as written (every one of them)", id="query")
        table: DataTable[Any] = Table(id="hits", cursor_type="row", zebra_stripes=True)
        table.add_columns(*HEADERS)
        yield table
        yield from self.compose_keys()

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
        self.found = found["hits"]
        self._show_hits()
        if self.found:
            self.query_one("#hits", DataTable).focus()
        else:
            self.notify(f"no events match {query}")

    def on_resize(self) -> None:
        if self.found:
            self._show_hits()

    def _show_hits(self) -> None:
        """The hits, the session as its shortest prefix that tells the hits' sessions apart and the
        snippet as wide as the rest of the screen allows."""
        table: DataTable[Any] = self.query_one("#hits", DataTable)
        today = self.toka.today()
        names = short_names({hit["session"] for hit in self.found})
        self.hits = {str(hit["seq"]): hit for hit in self.found}
        rows = []
        for hit in self.found:
            snippet = " ".join(hit["snippet"].replace(MARK_START, "«").replace(MARK_END, "»").split())
            cells = (str(hit["seq"]), day_ts(hit["ts"], today), names[hit["session"]], hit["kind"], snippet)
            rows.append((str(hit["seq"]), cells))
        fixed = [max([len(c[i]) for _, c in rows] + [len(label)]) for i, label in enumerate(HEADERS[:-1])]
        # Each column is padded by one cell on either side; the scroll bar takes two.
        snippet_width = max(MIN_SNIPPET, self.size.width - sum(w + 2 for w in fixed) - 4)
        table.clear(columns=True)
        for label, width in zip(HEADERS, [*fixed, snippet_width], strict=True):
            table.add_column(label, width=width, key=label)
        for key, cells in rows:
            table.add_row(*cells[:-1], cells[-1][:snippet_width], key=key)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        hit = self.hits.get(str(event.row_key.value))
        if hit is not None:
            self.toka.open_session(hit["session"], at_seq=hit["seq"])
