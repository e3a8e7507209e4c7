"""The core every server-side component is handed: the log, how to append to it, the settings,
the daemon's paths and the clock. Components take it in their constructor and nothing else of
the daemon; the server (daemon/server/process.py) builds one and wires the components."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from daemon.config import Settings
from daemon.paths import Paths
from store.base import AppendResult, EventStore
from store.events import NewEvent

# Appending goes through the group committer: answered once the events committed.
Append = Callable[[Sequence[NewEvent]], Awaitable[list[AppendResult]]]


@dataclass(frozen=True, slots=True)
class Core:
    store: EventStore
    append: Append
    settings: Settings
    paths: Paths
    clock: Callable[[], float] = field(default=time.time)
