"""The daemon's read of its followed folders at start, and the record of the agents' history imported.

Each time the daemon starts, its watcher first reads every file its folders hold from that file's
cursor (daemon/ingest/tail.py): in a new home, with no cursors yet, the whole of the agents'
history; afterwards only what the files gained while the daemon was down. :class:`StartRead`
counts that read (files found, files read, events added) for ``toka status`` and for the commands
that show history, which wait for it (op ``watch.ready``) so that what they print is complete.

Once a start's read of the agents' folders is complete, :class:`ImportRecord` writes when it
ended to ``watch/agents.json`` in the data dir: its absence is what makes a read the home's first
import, and `toka status` and `toka doctor` show when that one finished.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from daemon.ownership import open_private, private_dir, read_private
from store.errors import UnsafePath

if TYPE_CHECKING:
    from daemon.contract.results_status import WatchHistory

log = logging.getLogger("toka.watch")

# (files read, files found): what a waiting client is told after each file and each stored batch.
Listener = Callable[[int, int], None]


class ImportRecord:
    """When the agents' history was first imported, in one small JSON file; None: no file kept
    (a log in memory, which forgets its events at exit)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def imported_at(self) -> str | None:
        if self.path is None:
            return None
        try:
            found = json.loads(read_private(self.path)).get("imported_at")
        except FileNotFoundError:
            return None
        except (OSError, ValueError, AttributeError, UnsafePath) as exc:
            log.warning("unreadable %s, taken as no import done: %s", self.path, exc)
            return None
        return found if isinstance(found, str) else None

    def write(self, folders: list[str], files: int, events: int) -> str:
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        if self.path is None:
            return now
        private_dir(self.path.parent)
        record = {"imported_at": now, "folders": folders, "files": files, "events": events}
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        with open(open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "w", encoding="utf-8") as out:
            out.write(json.dumps(record))
        os.replace(tmp, self.path)
        return now


@dataclass
class StartRead:
    """This start's read of what the followed files held: how far it is, and who waits for it."""

    record: ImportRecord
    imported_at: str | None = None  # when the agents' history was first imported; None: not yet
    first: bool = False  # this read is the home's first import of the agents' folders
    files: int = 0  # found when the read began
    files_read: int = 0
    events: int = 0  # added to the log by this read
    done: asyncio.Event = field(default_factory=asyncio.Event)
    _listeners: set[Listener] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.imported_at = self.record.imported_at()

    def begin(self, files: int, agents: bool) -> None:
        self.files, self.first = files, agents and self.imported_at is None

    def progressed(self) -> None:
        for listener in list(self._listeners):
            listener(self.files_read, self.files)

    def finish(self, agent_folders: list[str], complete: bool) -> None:
        """The read ended: ``complete`` when every file was read (not cut short by a stop or a
        failure), which records the agents' history as imported when their folders were read."""
        if complete and agent_folders:
            self.imported(agent_folders, self.files_read, self.events)
        self.done.set()

    def imported(self, agent_folders: list[str], files: int, events: int) -> None:
        """The agents' folders were read whole: the home's first import, unless one was recorded."""
        if self.imported_at is not None:
            return
        try:
            self.imported_at = self.record.write(agent_folders, files, events)
        except (OSError, UnsafePath) as exc:
            log.error("watch: could not record the agents' history as imported: %s", exc)

    async def wait(self, listener: Listener | None, closed: asyncio.Event) -> None:
        """Until the read is done or the client hangs up; ``listener`` hears how far it is."""
        if self.done.is_set():
            return
        if listener is not None:
            self._listeners.add(listener)
            listener(self.files_read, self.files)
        try:
            waits = [asyncio.ensure_future(self.done.wait()), asyncio.ensure_future(closed.wait())]
            _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
        finally:
            if listener is not None:
                self._listeners.discard(listener)

    def to_json(self) -> WatchHistory:
        return {
            "state": "done" if self.done.is_set() else "reading",
            "first": self.first,
            "files": self.files,
            "files_read": self.files_read,
            "events": self.events,
            "imported_at": self.imported_at,
        }
