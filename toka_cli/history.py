"""Waiting for the agents' history before showing it.

When the daemon starts it first reads what the folders it follows hold (in a new home, the
agents' whole history: daemon/ingest/history.py). The commands that show the log's history
(`toka report`, `toka sessions`, `toka tui`) wait for that read before they ask, so that what they
print is complete: a bar on a terminal's stderr (files read of those found), one line on stderr
otherwise; stdout, and so `--json`, stays the command's own. Hooks and `toka statusline` never
wait: they must not hold up the agent.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, cast

from store.errors import UsageError
from toka_cli.call import connection
from toka_cli.output import note, progress
from toka_cli.watch_views import read_at_start

if TYPE_CHECKING:
    from daemon.contract.results import WatchHistory


def wait_for_history() -> None:
    """Return once the daemon's read at start of its followed folders is done (at once when it
    is, or when the daemon follows nothing)."""
    with connection() as client:
        try:
            read = cast("WatchHistory | None", client.call("watch.ready", wait=False))
        except UsageError:  # a daemon from before watch.ready: it has nothing to wait for
            return
        if read is None or read["state"] == "done":
            return
        what = read_at_start(read["first"])
        if sys.stderr.isatty():
            with progress(f"{what}: files") as update:
                update(read["files_read"], read["files"])
                client.call("watch.ready", progress=update)
            return
        note(f"toka: {what} ({read['files_read']} of {read['files']} files read); the answer follows once it is done")
        client.call("watch.ready", progress=_quiet)


def _quiet(done: int, total: int) -> None:
    """Progress lines heard and not shown: in a pipe, the one line above says it all."""
