"""The output service: data on stdout, diagnostics on stderr, JSON for scripts, Rich for people.

Rich respects ``NO_COLOR`` and drops styling when stdout is not a terminal; progress bars go to
stderr and only when it is a terminal, so pipes stay quiet.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from rich.console import Console


# Width for output that is not a terminal: wide enough that pipes and files get whole lines.
PIPE_WIDTH = 200


@cache
def console() -> Console:
    return Console(soft_wrap=False, width=None if sys.stdout.isatty() else PIPE_WIDTH)


@cache
def err_console() -> Console:
    return Console(stderr=True)


def print_json(data: Any) -> None:
    """One JSON document on stdout."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def print_json_line(data: Any) -> None:
    """One line of a JSON-lines stream on stdout, flushed so followers see it at once."""
    sys.stdout.write(json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n")
    sys.stdout.flush()


def note(message: str) -> None:
    """A diagnostic for people, on stderr."""
    err_console().print(message, highlight=False)


@contextmanager
def progress(description: str, total: int | None = None) -> Iterator[Callable[[int, int | None], None]]:
    """Yields ``update(done, total)``; draws a bar on stderr only when stderr is a terminal."""
    if not sys.stderr.isatty():
        yield lambda done, total=None: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err_console(),
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=total)

        def update(done: int, total: int | None = None) -> None:
            bar.update(task, completed=done, **({"total": total} if total is not None else {}))

        yield update
