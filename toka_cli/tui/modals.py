"""Modal screens: confirm a change, show an error, list the key bindings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

if TYPE_CHECKING:
    from textual.app import ComposeResult


class ConfirmScreen(ModalScreen[bool]):
    """Yes or no before anything changes in the daemon."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__(classes="modal")
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(escape(self.question), classes="question")
            with Horizontal(classes="buttons"):
                yield Button("Yes (y)", variant="warning", id="yes")
                yield Button("No (n)", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class ErrorScreen(ModalScreen[None]):
    """A TokaError's message and hint, in place of a traceback."""

    BINDINGS = [Binding("escape,enter", "close", "Close", id="error.close")]

    def __init__(self, message: str, hint: str | None = None, *, title: str = "error") -> None:
        super().__init__(classes="modal")
        self.title_text = title
        self.message = message
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog error"):
            yield Static(escape(self.title_text), classes="title")
            yield Static(escape(self.message), id="error-message")
            if self.hint:
                yield Static(escape(f"hint: {self.hint}"), classes="hint")
            with Horizontal(classes="buttons"):
                yield Button("Close", id="close")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)


class HelpScreen(ModalScreen[None]):
    """The bindings of the screen below, key and description."""

    BINDINGS = [Binding("escape,question_mark,q", "close", "Close", id="help.close")]

    def __init__(self, bindings: list[tuple[str, str]]) -> None:
        super().__init__(classes="modal")
        self.bindings = bindings

    def compose(self) -> ComposeResult:
        keys = [f"[b]{escape(key):>8}[/b]  {escape(text)}" for key, text in self.bindings]
        lines = "\n".join(keys)
        with Vertical(classes="dialog help"):
            yield Static("Keys", classes="title")
            with VerticalScroll():
                yield Static(lines, id="help-keys")

    def action_close(self) -> None:
        self.dismiss(None)
