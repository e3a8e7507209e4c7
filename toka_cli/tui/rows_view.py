"""A table that draws only the rows in sight: the session timeline's.

Textual's DataTable does work for every row it is given (each ``add_row`` revalidates the cursor
and, when next idle, measures every cell), which made opening a session cost tens of
milliseconds for its first hundred rows. Here rows are kept as given; the column widths are the
widest cell's length, counted once when the rows are set; a row is turned into a line of cells
only when it is drawn, and only the rows on screen are drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

Cell = str | Text
# A cell's padding on either side, as DataTable has it.
PAD = 1


class RowsView(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    RowsView { height: 1fr; }
    RowsView > .rows-view--header { text-style: bold; background: $panel; }
    RowsView > .rows-view--cursor { background: $block-cursor-background; color: $block-cursor-foreground; }
    RowsView > .rows-view--blurred-cursor { background: $block-cursor-blurred-background; }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "rows-view--header",
        "rows-view--cursor",
        "rows-view--blurred-cursor",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down,j", "move(1)", "Down", show=False, id="rows.down"),
        Binding("up,k", "move(-1)", "Up", show=False, id="rows.up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="rows.page_down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="rows.page_up"),
        Binding("home", "first", "First", show=False, id="rows.first"),
        Binding("enter", "select", "Select", show=False, id="rows.select"),
    ]

    cursor_row: reactive[int] = reactive(0, always_update=True)

    class Highlighted(Message):
        """The cursor is on the row of ``key``."""

        def __init__(self, view: RowsView, key: str) -> None:
            super().__init__()
            self.view = view
            self.key = key

        @property
        def control(self) -> RowsView:
            return self.view

    class Selected(Highlighted):
        """``enter`` on the row of ``key``."""

    def __init__(self, columns: Sequence[str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns = tuple(columns)
        self._keys: list[str] = []
        self._rows: list[Sequence[Cell]] = []
        self._index: dict[str, int] = {}
        self._widths = [len(label) for label in self.columns]

    # The rows -------------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        return len(self._rows)

    def clear(self) -> None:
        self.set_rows([])

    def set_rows(self, rows: Sequence[tuple[str, Sequence[Cell]]]) -> None:
        """Replace the rows: (key, cells) each, in the order shown."""
        self._keys = [key for key, _ in rows]
        self._rows = [cells for _, cells in rows]
        self._index = {key: index for index, key in enumerate(self._keys)}
        self._widths = [len(label) for label in self.columns]
        for cells in self._rows:
            self._widen(cells)
        self._resized()
        self.cursor_row = min(self.cursor_row, max(0, len(self._rows) - 1))

    def add_row(self, *cells: Cell, key: str) -> None:
        """One more row at the end (a live event)."""
        self._index[key] = len(self._keys)
        self._keys.append(key)
        self._rows.append(cells)
        self._widen(cells)
        self._resized()
        if len(self._rows) == 1:
            self.cursor_row = 0

    def get_row_at(self, index: int) -> Sequence[Cell]:
        return self._rows[index]

    def get_row_index(self, key: str) -> int:
        return self._index[key]

    @property
    def cursor_key(self) -> str | None:
        return self._keys[self.cursor_row] if self._rows else None

    def move_cursor(self, row: int) -> None:
        self.cursor_row = max(0, min(row, len(self._rows) - 1))

    def _widen(self, cells: Sequence[Cell]) -> None:
        for index, cell in enumerate(cells):
            length = cell.cell_len if isinstance(cell, Text) else len(cell)
            if length > self._widths[index]:
                self._widths[index] = length

    def _resized(self) -> None:
        width = sum(w + 2 * PAD for w in self._widths)
        self.virtual_size = Size(width, len(self._rows) + 1)
        self.refresh()

    # The cursor -----------------------------------------------------------------------------

    def watch_cursor_row(self, row: int) -> None:
        if not self._rows:
            return
        self._follow_cursor()
        # Once more after the refresh: new rows change the scroll range only then.
        self.call_after_refresh(self._follow_cursor)
        self.refresh()
        self.post_message(self.Highlighted(self, self._keys[row]))

    def _follow_cursor(self) -> None:
        row, sight = self.cursor_row, max(1, self.scrollable_content_region.height - 1)
        if row < self.scroll_y:
            self.scroll_to(y=row, animate=False, immediate=True)
        elif row >= self.scroll_y + sight:
            self.scroll_to(y=row - sight + 1, animate=False, immediate=True)

    def action_move(self, by: int) -> None:
        self.move_cursor(self.cursor_row + by)

    def action_page(self, by: int) -> None:
        self.move_cursor(self.cursor_row + by * max(1, self.scrollable_content_region.height - 1))

    def action_first(self) -> None:
        self.move_cursor(0)

    def action_select(self) -> None:
        if self._rows:
            self.post_message(self.Selected(self, self._keys[self.cursor_row]))

    def on_click(self, event: Click) -> None:
        row = int(self.scroll_y) + event.y - 1
        if 0 <= row < len(self._rows):
            self.move_cursor(row)

    # Drawing --------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if y == 0:
            line = self._line(self.columns)
            style = self.get_component_rich_style("rows-view--header")
        else:
            index = int(self.scroll_y) + y - 1
            if index >= len(self._rows):
                return Strip.blank(width, self.rich_style)
            line = self._line(self._rows[index])
            style = Style()
            if index == self.cursor_row:
                name = "rows-view--cursor" if self.has_focus else "rows-view--blurred-cursor"
                style = self.get_component_rich_style(name)
        segments = list(line.render(self.app.console))
        strip = Strip(segments, line.cell_len).crop(int(self.scroll_x), int(self.scroll_x) + width)
        return strip.apply_style(self.rich_style + style).extend_cell_length(width, self.rich_style + style)

    def _line(self, cells: Sequence[Any]) -> Text:
        line = Text(no_wrap=True, overflow="crop", end="")
        for cell, width in zip(cells, self._widths, strict=False):
            text = cell if isinstance(cell, Text) else Text(str(cell))
            text = text.copy()
            text.truncate(width, overflow="ellipsis", pad=True)
            line.append(" " * PAD)
            line.append_text(text)
            line.append(" " * PAD)
        return line
