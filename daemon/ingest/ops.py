"""The ingestion's operations (docs/protocol.md): ``spool.drain``, which a hook that got through
sends when it finds a spool, so that what hooks spooled meanwhile lands now rather than at the
next check; and ``watch.ready``, which the commands that show the log's history send first, so
that they wait for the daemon's read at start of the folders it follows (in a new home, the
agents' whole history) and print it complete."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from daemon.ingest.spool import SpoolDrain
from daemon.ingest.watch import DaemonWatcher
from daemon.rpc.registry import Call, Ops
from daemon.rpc.requests import NoArgs

if TYPE_CHECKING:
    from daemon.contract.results_status import WatchHistory

OPS = Ops(SpoolDrain)
WATCH = Ops(DaemonWatcher)


@OPS.op("spool.drain", NoArgs)
async def spool_drain(spool: SpoolDrain, request: NoArgs, call: Call) -> dict[str, Any]:
    # Answered at once: the drain runs in the background, off the hook's path.
    return {"draining": spool.kick()}


@dataclass(frozen=True, slots=True)
class Ready:
    wait: bool = True  # false: how far the read is, at once


@WATCH.op("watch.ready", Ready, progress=True)
async def watch_ready(watcher: DaemonWatcher, request: Ready, call: Call) -> WatchHistory | None:
    """The read at start (files read of those found), once done (or at once without ``wait``);
    null when the daemon watches nothing."""
    if watcher.status() is None:
        return None
    if request.wait:
        await watcher.start_read.wait(call.progress, call.closed)
        await call.progress_sent()
    return watcher.start_read.to_json()
