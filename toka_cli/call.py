"""How a command talks to the daemon: one call, then its answer as JSON or as the view.

A command states its op, its args and how people see the answer::

    call_and_show("agents.list", json_, agents_view, trace=trace, state=state)

:func:`call_and_show` opens the client, makes the call and hands the result to
:func:`toka_cli.output.emit`, which prints it as JSON with ``--json`` or through the renderer.
Args given as None are not sent, so the daemon's default applies (an arg whose value may be a
JSON null, as memory.set's, goes through :func:`connection`). A command that makes several
calls or follows a stream uses the pieces: :func:`connection` and :func:`call` here,
:func:`~toka_cli.output.emit` and :func:`~toka_cli.output.emit_lines` for the printing.

The client is the standard library's socket and json (daemon/client/sync.py), so importing
this costs `toka --help` nothing; Rich loads only when a renderer prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from daemon.client.sync import Client
from toka_cli.output import Result, emit, progress


@contextmanager
def connection() -> Iterator[Client]:
    """The daemon's client (started when none runs), closed on the way out."""
    with Client() as client:
        yield client


def call(op: str, /, *, progress_label: str | None = None, **args: Any) -> Any:
    """The result of one request. With ``progress_label``, the daemon reports its progress and
    a bar with that label shows it on a terminal's stderr."""
    given = {name: value for name, value in args.items() if value is not None}
    with connection() as client:
        if progress_label is None:
            return client.call(op, **given)
        with progress(progress_label) as update:
            return client.call(op, progress=update, **given)


def call_and_show(
    op: str,
    as_json: bool,
    render: Callable[[Result], object],
    /,
    *,
    progress_label: str | None = None,
    **args: Any,
) -> Result:
    """One request, its result printed as JSON or rendered for people; returns the result."""
    result: Result = call(op, progress_label=progress_label, **args)
    return emit(result, as_json, render)
