"""The hook spool's ingestion: events that agent hooks recorded while the daemon was down
(written by daemon/client/spool.py).

The daemon ingests the spool once at start-up. It claims the file by renaming it (under the same
lock, so no hook writes to the claimed file afterwards: a hook that opened it before the rename
sees the path changed and writes to a new spool), appends its events with their keys, and
deletes the claimed file only after the append committed. A crash in between leaves the claimed
file behind; the next start appends it again and the keys turn that into a no-op, so each line
lands exactly once. Lines that are not events are moved to ``<spool>.rejected``, not dropped.
"""

from __future__ import annotations

import fcntl
import os
from typing import TYPE_CHECKING

from daemon.ownership import open_private, read_private

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Protocol

    from daemon.paths import Paths
    from store.base import AppendResult
    from store.events import NewEvent

    class Appender(Protocol):
        """The group committer, or the store itself: both append a batch and answer when committed."""

        async def append(self, events: Sequence[NewEvent]) -> list[AppendResult]: ...


# Events per append call while ingesting: one transaction each, well under the committer's bound.
INGEST_BATCH = 1000


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
    """Append every spooled event (a claimed file left by a crash first); the events created.

    Never raises for a bad spool or a failed append: the daemon starts regardless, and what was
    not committed stays on disk for the next start.
    """
    import logging

    from store.errors import TokaError

    log = logging.getLogger("toka.daemon")
    created = 0
    try:
        for claimed_now in (False, True):
            if claimed_now and not _claim(paths):
                break
            claimed = claimed_path(paths)
            if not claimed.exists():
                continue
            created += await _ingest_file(paths, claimed, appender)
            claimed.unlink()
    except (OSError, TokaError) as exc:
        log.error("hook spool not ingested, kept for the next start: %s", exc)
    if created:
        log.info("ingested %d hook events from %s", created, paths.spool)
    return created


async def _ingest_file(paths: Paths, path: Path, appender: Appender) -> int:
    import json
    import logging

    from store.errors import InvalidEvent
    from store.events import parse_new_event

    log = logging.getLogger("toka.daemon")
    events: list[NewEvent] = []
    rejected: list[bytes] = []
    for line in read_private(path).splitlines():
        if not line.strip():
            continue
        try:
            events.append(parse_new_event(json.loads(line)))
        except (ValueError, RecursionError, InvalidEvent) as exc:
            log.warning("spooled line is not an event (%s); kept in %s", exc, rejected_path(paths))
            rejected.append(line)
    created = 0
    for start in range(0, len(events), INGEST_BATCH):
        results = await appender.append(events[start : start + INGEST_BATCH])
        created += sum(r.created for r in results)
    if rejected:
        with open(open_private(rejected_path(paths), os.O_WRONLY | os.O_APPEND | os.O_CREAT), "ab") as out:
            out.write(b"".join(line + b"\n" for line in rejected))
            out.flush()
            os.fsync(out.fileno())
    return created


class SpoolDrain:
    """The spool of a running daemon: whether hooks left events in it, and ingesting it, one
    ingestion at a time (two would both take the claimed file)."""

    def __init__(self, paths: Paths, appender: Appender) -> None:
        import asyncio

        self._paths = paths
        self._appender = appender
        self._lock = asyncio.Lock()

    def waiting(self) -> bool:
        """Whether hooks left events in the spool (or an ingestion left its claimed file)."""
        return self._paths.spool.exists() or claimed_path(self._paths).exists()

    async def drain(self) -> None:
        async with self._lock:
            await ingest_spool(self._paths, self._appender)
