"""The hook spool's ingestion: events that agent hooks could not hand to the daemon (it was down,
hung or busy, its store failed, the payload was longer than a request line), written by
daemon/client/spool.py.

The daemon drains the spool at start-up, before its socket answers, and then while it runs:
every CHECK_S seconds when the spool holds anything, and at once when a hook that got through
finds a spool (op ``spool.drain``). While the store fails (read-only, full, unreachable) the
spool stays and the tries space out, up to MAX_BACKOFF_S apart, until one succeeds or a hook
gets through again.

Hooks append to the spool at any moment, so a drain never reads the file they write: it claims
it by renaming it to ``<spool>.ingesting`` under the hooks' lock. A hook holding the lock
finishes its line first; a hook that opened the file before the rename finds, once it has the
lock, that the path names another file or none, and writes to a new spool. Every line written
is therefore in the claimed file or in the spool, none in both. Renaming, not holding the lock
through the ingestion, keeps hooks waiting for a rename, never for a commit.

The claimed file is read line by line and appended in batches bounded by count and bytes
(daemon/batching.py), each event with its key, and deleted only once every batch committed. A
crash or a failed append in between leaves it behind; the next drain appends it again and the
keys turn that into no-ops, so each line lands exactly once. A line that is not an event, or an
event the log refuses on its own (a batch that fails is retried event by event), is moved to
``<spool>.rejected``, not dropped, and the rest lands.

The same drains take the hook inbox (daemon/ingest/inbox.py): the payloads the recording hooks
drop there without starting Python, after the spool's lines. While the daemon runs it is told of
new files (watchfiles, as the transcripts' watcher is: INBOX_NOTIFY), and looks every CHECK_S
seconds besides.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
from typing import TYPE_CHECKING

from daemon.batching import MAX_BATCH_BYTES, Batcher
from daemon.component import Component
from daemon.config import StoreSettings
from daemon.ingest import inbox
from daemon.ownership import open_private, private_dir
from store.errors import Busy, InvalidEvent, StoreError, TokaError
from store.events import NewEvent, parse_new_event

if TYPE_CHECKING:
    from collections.abc import Awaitable, Sequence
    from pathlib import Path
    from typing import Any, Protocol

    from daemon.core import Core
    from daemon.paths import Paths
    from store.base import AppendResult

    class Appender(Protocol):
        """The group committer, or the store itself: both append a batch and answer when committed."""

        def append(self, events: Sequence[NewEvent]) -> Awaitable[list[AppendResult]]: ...


log = logging.getLogger("toka.daemon")

# How often a running daemon looks for a spool: two stats, when it holds nothing.
CHECK_S = 2.0
# The longest wait between two drains while the store keeps failing them.
MAX_BACKOFF_S = 60.0
# How watchfiles reports new files of the inbox: once none has come for 250 ms, or 1 s after the
# first, so that the hooks of a turn (a tool call's two, five calls at once, the end of a turn)
# land in one transaction while the agent waits for its model, not in one each while it works:
# on 2 cores, draining at every file cost a turn of five tool calls about 70 ms of CPU more.
INBOX_NOTIFY: dict[str, Any] = {"debounce": 1000, "step": 250}


def claimed_path(paths: Paths) -> Path:
    return paths.spool.with_name(paths.spool.name + ".ingesting")


def rejected_path(paths: Paths) -> Path:
    return paths.spool.with_name(paths.spool.name + ".rejected")


def _claim(paths: Paths) -> bool:
    """Rename the spool to the claimed name under the hooks' lock; False when there is none."""
    try:
        fd = open_private(paths.spool, os.O_RDONLY)  # a link or another user's file is refused
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(paths.spool, claimed_path(paths))
    finally:
        os.close(fd)
    return True


async def ingest_spool(paths: Paths, appender: Appender) -> int:
    """Append every spooled event (a claimed file left by a crash or a failed drain first); the
    events created. Raises the store's error (or an OSError) when an append fails: what was not
    committed stays on disk for the next drain."""
    created = 0
    for claimed_now in (False, True):
        if claimed_now and not _claim(paths):
            break
        claimed = claimed_path(paths)
        if not claimed.exists():
            continue
        created += await _ingest_file(paths, claimed, appender)
        claimed.unlink()
    return created


async def _ingest_file(paths: Paths, path: Path, appender: Appender) -> int:
    rejected: list[bytes] = []
    batcher: Batcher[tuple[bytes, NewEvent]] = Batcher(MAX_BATCH_BYTES)
    created = 0
    with open(open_private(path, os.O_RDONLY), "rb") as spooled:
        for raw in spooled:
            line = raw.rstrip(b"\r\n")
            if not line.strip():
                continue
            try:
                event = parse_new_event(json.loads(line, parse_constant=_no_constant))
            except (ValueError, RecursionError, InvalidEvent) as exc:
                log.warning("spooled line is not an event (%s); kept in %s", exc, rejected_path(paths))
                rejected.append(line)
                continue
            if full := batcher.add((line, event), len(line)):
                created += await _append(full, appender, rejected, paths)
    if batch := batcher.take():
        created += await _append(batch, appender, rejected, paths)
    if rejected:
        with open(open_private(rejected_path(paths), os.O_WRONLY | os.O_APPEND | os.O_CREAT), "ab") as out:
            out.write(b"".join(line + b"\n" for line in rejected))
            out.flush()
            os.fsync(out.fileno())
    return created


async def _append(batch: list[tuple[bytes, NewEvent]], appender: Appender, rejected: list[bytes], paths: Paths) -> int:
    """Append a batch; when the log refuses it (not when the store fails), each event alone, the
    refused ones going to ``rejected``."""
    try:
        results = await appender.append([event for _, event in batch])
    except (StoreError, Busy):
        raise  # the store, not the events: all of them wait for the next drain
    except TokaError as exc:
        if len(batch) > 1:
            return sum([await _append([item], appender, rejected, paths) for item in batch])
        log.warning("spooled event refused (%s); kept in %s", exc.message, rejected_path(paths))
        rejected.append(batch[0][0])
        return 0
    return sum(result.created for result in results)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")  # the store could not hash it


class SpoolDrain(Component):
    """The spool of a running daemon: whether hooks left events in it, and draining it, one
    drain at a time (two would both take the claimed file). A daemon whose log is thrown away
    at exit (``durable`` false: the memory backend) leaves the spool to a durable one."""

    def __init__(self, core: Core) -> None:
        self._paths = core.paths
        self._appender: Appender = core
        self._durable = core.settings[StoreSettings].backend != "memory"
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._stop_watching = asyncio.Event()
        self._last_error: str | None = None

    def waiting(self) -> bool:
        """Whether hooks left events in the spool (or a drain left its claimed file) or their
        payloads in the inbox."""
        paths = self._paths
        return paths.spool.exists() or claimed_path(paths).exists() or inbox.waiting(paths)

    async def drain(self) -> None:
        """Ingest the spool and the inbox now; when the store fails, what they held stays for the
        next drain."""
        await self._drain()

    async def _drain(self) -> bool:
        """:meth:`drain`; False when the store failed."""
        if not self._durable:
            return True
        async with self._lock:
            try:
                created = await ingest_spool(self._paths, self._appender)
                created += await inbox.ingest_inbox(self._paths, self._appender)
            except (OSError, TokaError) as exc:
                message = exc.message if isinstance(exc, TokaError) else str(exc)
                if message != self._last_error:  # said once, not at every try
                    log.error("hook spool not ingested, kept and tried again: %s", message)
                self._last_error = message
                return False
        if created:
            log.info("ingested %d hook events from %s", created, self._paths.spool)
        if self._last_error is not None:
            log.info("hook spool ingested again")
            self._last_error = None
        return True

    def kick(self) -> bool:
        """Drain soon, off the caller's path (a hook got through and found a spool); whether
        there is anything to drain."""
        wanted = self._durable and self.waiting()
        if wanted:
            self._wake.set()
        return wanted

    async def start(self) -> None:
        """Drain what hooks spooled while no daemon ran (before the socket answers: a client that
        sees the daemon up sees them), then on a timer and when kicked, until :meth:`stop`."""
        await self.drain()
        if self._durable:
            self._task = asyncio.create_task(self._run(), name="spool-drain")
            self._watcher = asyncio.create_task(self._watch_inbox(), name="inbox-watch")

    async def stop(self, deadline: float = 0.0) -> None:
        """Stop draining; a drain cut short leaves its claimed file for the next start. The
        inbox's watching thread ends at its next step (INBOX_NOTIFY), within ``deadline``;
        cancelling its task alone would leave the thread running, and the process with it."""
        self._stop_watching.set()
        if self._watcher is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._watcher), deadline)
        for task in (self._watcher, self._task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _watch_inbox(self) -> None:
        """Drain when hooks drop files into the inbox (INBOX_NOTIFY; the inbox made here, 0700,
        when missing)."""
        from watchfiles import awatch

        try:
            private_dir(self._paths.inbox)
            async for _ in awatch(self._paths.inbox, stop_event=self._stop_watching, **INBOX_NOTIFY):
                self._wake.set()
        except Exception as exc:  # no inotify left, say: the timer still drains it
            log.warning("hook inbox not watched (%s); drained every %.0f s", exc, CHECK_S)

    async def _run(self) -> None:
        delay = CHECK_S
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), delay)
            self._wake.clear()
            if not self.waiting():
                delay = CHECK_S
                continue
            try:
                ok = await self._drain()
            except Exception:  # a bug must not end draining for the daemon's lifetime
                log.exception("draining the hook spool failed")
                ok = False
            delay = CHECK_S if ok else min(delay * 2, MAX_BACKOFF_S)
