"""What frames every screen: the tab bar of the screens `1`–`6` switch to, the key bar (the
footer) with `?` and `q` first so that 80 columns keep them, and the tables' `j`/`k`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.markup import escape
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, Static
from textual.widgets._footer import FooterKey

if TYPE_CHECKING:
    from textual.app import ComposeResult

# The screens of the tab bar: (mode, key, label). "session" is the session last opened.
TABS = (
    ("overview", "1", "Overview"),
    ("handoffs", "2", "Handoffs"),
    ("search", "3", "Search"),
    ("memory", "4", "Memory"),
    ("cost", "5", "Cost"),
    ("session", "6", "Session"),
)
# The keys shown first in the key bar, whatever the screen adds: help and quit.
FIRST_KEYS = ("app.help", "app.quit")


class Table(DataTable[Any]):
    """A DataTable that also moves with `j` and `k`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="table.down"),
        Binding("k", "cursor_up", "Up", show=False, id="table.up"),
    ]


class TabBar(Static):
    """``toka  1 Overview  2 Handoffs …``: the screen shown in reverse, each tab a click away.
    The session tab names the session open, kept current through the app's ``session_name``."""

    DEFAULT_CSS = "TabBar { height: 1; background: $panel; }"

    def __init__(self, current: str) -> None:
        super().__init__(id="tabs", markup=True)
        self.current = current

    def on_mount(self) -> None:
        self.watch(self.app, "session_name", self._show)

    def _show(self, session_name: str) -> None:
        parts = ["[b] toka [/b]"]
        for mode, key, label in TABS:
            if mode == "session":
                short = session_name if len(session_name) <= 9 else session_name[:8] + "…"
                label = f"Session {escape(short)}" if session_name else "Session"
            text = f" {key} {label} "
            style = "reverse b" if mode == self.current else "dim" if mode == "session" and not session_name else ""
            click = f"@click=app.open_tab('{mode}')"
            parts.append(f"[{style} {click}]{text}[/]" if style else f"[{click}]{text}[/]")
        self.update(" ".join(parts))


class KeyBar(Footer):
    """The footer, with help and quit first: at 80 columns the keys at the end are cut."""

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        shown = [
            (binding, enabled, tooltip)
            for (_, binding, enabled, tooltip) in self.screen.active_bindings.values()
            if binding.show
        ]
        shown.sort(key=lambda item: item[0].id not in FIRST_KEYS)
        self.styles.grid_size_columns = len(shown)
        for binding, enabled, tooltip in shown:
            yield FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                disabled=not enabled,
                tooltip=tooltip,
            ).data_bind(compact=Footer.compact)
        palette = self.screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
        if self.app.ENABLE_COMMAND_PALETTE and palette is not None:
            _, binding, enabled, _ = palette
            yield FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                classes="-command-palette",
                disabled=not enabled,
            )
