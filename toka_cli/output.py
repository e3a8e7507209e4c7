"""The output service: data on stdout, diagnostics on stderr, JSON for scripts, Rich for people.

``NO_COLOR`` turns every escape off, and Rich drops styling when stdout is not a terminal; progress
bars go to stderr and only when it is a terminal, so pipes stay quiet. Nothing printed is read as
Rich markup unless a caller asks for it: the text is the user's.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, TypeVar

if TYPE_CHECKING:
    from rich.console import Console

Result = TypeVar("Result")

# Width for output that is not a terminal: wide enough that pipes and files get whole lines.
PIPE_WIDTH = 200


def _console(**options: Any) -> Console:
    """A Console that reads no markup: what it prints holds user text (payloads, paths, names),
    where ``a[i]`` or ``[/INST]`` is text, not a style. Styles are applied with ``markup=True``.
    Rich is imported here, on first output, so that `toka --help` and JSON output never load it.
    """
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            # Rich exits 1 here, but `toka events | head` is no failure: base.TokaGroup turns the
            # error into exit 0 with stdout sent to /dev/null, as it does for JSON lines.
            raise BrokenPipeError

    return _Console(markup=False, color_system=_color_system(), **options)


def _color_system() -> Literal["auto"] | None:
    # Rich's own NO_COLOR handling drops colours but still writes bold and dim; no-color.org
    # users expect plain text, so NO_COLOR (set and not empty) turns every escape off.
    return None if os.environ.get("NO_COLOR", "") != "" else "auto"


@cache
def console() -> Console:
    if sys.stdout.isatty():
        return _console(soft_wrap=False)
    return _console(soft_wrap=False, width=PIPE_WIDTH, file=_Unpadded())


class _Unpadded:
    """Standard output in a pipe, without the spaces that pad the end of each line: Rich pads every
    cell to its column and a table to its widest line, a terminal does not show them, but a file
    or a diff keeps them. Resolves ``sys.stdout`` at each write, as Rich's own default does."""

    def __init__(self) -> None:
        self._held = ""  # spaces at the end of a write, kept until what follows them is known

    def write(self, text: str) -> int:
        whole = self._held + text
        body, newline, tail = whole.rpartition("\n")
        kept = tail.rstrip(" ")
        self._held = tail[len(kept) :]
        sys.stdout.write(unpadded(body + newline) + kept)
        return len(text)

    def flush(self) -> None:
        sys.stdout.flush()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return getattr(sys.stdout, "encoding", None) or "utf-8"


def unpadded(text: str) -> str:
    """``text`` without spaces at the ends of its lines."""
    return "\n".join(line.rstrip(" ") for line in text.split("\n")) if " \n" in text else text


def print_view(view: Any, **options: Any) -> None:
    """A view for people on stdout: a table of plain text that fits the width (toka_cli/render.py's
    ``Grid``) as its lines, without loading Rich; anything else through Rich's console."""
    plain_lines = getattr(view, "plain_lines", None)
    if console.cache_info().currsize:  # Rich is in use already: its console's file and width hold
        plain_lines = None
    lines = None if plain_lines is None else plain_lines(view_width(), lambda text: styled(text, "bold"))
    if lines is None:
        console().print(view, **options)
        return
    text = "".join(line + "\n" for line in lines)
    sys.stdout.write(text if sys.stdout.isatty() else unpadded(text))


def view_width() -> int:
    """The width a view is laid out in: Rich's console's once it is in use, else the width Rich
    would give it: COLUMNS or the terminal's on a terminal, else PIPE_WIDTH."""
    if console.cache_info().currsize:
        return int(console().width)
    if not sys.stdout.isatty():
        return PIPE_WIDTH
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit():
        return int(columns)
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except OSError:
        return 80


@cache
def err_console() -> Console:
    # soft_wrap: a diagnostic such as `skipped file:line: reason` stays one line for grep.
    return _console(stderr=True, soft_wrap=True)


# Long streams of lines (a replay) are written without Rich, whose print costs about 2 ms a line:
# the two styles they use as SGR codes, and control characters of the user's text dropped, as
# Rich drops them, so that a payload cannot move the cursor or retitle the terminal.
_SGR = {"dim": "2", "bold": "1"}
_CONTROLS = dict.fromkeys([*range(0x20), *range(0x7F, 0xA0)])  # C0, DEL and C1 (0x9B starts a CSI too)


@cache
def _styling() -> bool:
    return sys.stdout.isatty() and _color_system() is not None and os.environ.get("TERM") != "dumb"


def styled(text: str, style: Literal["dim", "bold"]) -> str:
    """``text`` in ``style`` on a terminal that takes it; as it is in a pipe or with NO_COLOR."""
    return f"\x1b[{_SGR[style]}m{text}\x1b[0m" if _styling() else text


def plain(text: str) -> str:
    """User text with its control characters dropped, fit to write to a terminal as it is."""
    return text.translate(_CONTROLS)


def print_json(data: Any) -> None:
    """One JSON document on stdout."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def print_json_line(data: Any) -> None:
    """One line of a JSON-lines stream on stdout, flushed so followers see it at once."""
    sys.stdout.write(json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n")
    sys.stdout.flush()


def emit(result: Result, as_json: bool, render: Callable[[Result], object]) -> Result:
    """The one fork between scripts and people: ``result`` as one JSON document (``--json``, the
    shapes of docs/json.md), or ``render(result)`` for a terminal. Returns ``result``, so a
    command can still act on it (raise the error an outcome calls for)."""
    if as_json:
        print_json(result)
    else:
        render(result)
    return result


def emit_lines(items: Iterable[Result], as_json: bool, render: Callable[[Result], object]) -> None:
    """A stream: each item as a JSON line as soon as it comes, or rendered."""
    for item in items:
        if as_json:
            print_json_line(item)
        else:
            render(item)


def note(message: str) -> None:
    """A diagnostic for people, on stderr."""
    err_console().print(message, highlight=False)


def _no_progress(done: int, total: int | None = None, label: str | None = None) -> None:
    return None


@contextmanager
def progress(description: str, total: int | None = None, *, in_bytes: bool = False) -> Iterator[Callable[..., None]]:
    """Yields ``update(done, total, label)``; draws a bar on stderr only when stderr is a
    terminal. ``label`` (a file's name) follows the description; ``in_bytes`` counts in MB."""
    if not sys.stderr.isatty():
        yield _no_progress
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn() if in_bytes else MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err_console(),
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=total)

        def update(done: int, total: int | None = None, label: str | None = None) -> None:
            shown = description if label is None else f"{description} {label}"
            if total is None:
                bar.update(task, completed=done, description=shown)
            else:
                bar.update(task, completed=done, total=total, description=shown)

        yield update
