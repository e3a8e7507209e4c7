"""The hook inbox's ingestion: payloads the recording hooks dropped into ``hooks.inbox`` in the
data dir, one file each, with a few words of shell and no Python (toka_cli/integrate/inbox.py).

A file is named for its agent (``claude-code.<pid>``, ``codex.<random>``) and holds the hook's
payload as the agent wrote it to the hook's stdin. The daemon makes of it the event `toka hook`
would have made (daemon/contract/hooks.py): kind ``hook.<event in snake case>``, the payload's
``session_id`` as session, agent ``main``, the payload unchanged, and the key of the occurrence:
the tool use for a tool's events, else one drawn from the file itself (its name, inode and
modification time), so that a file ingested again after a crash lands once and two files of the
same payload are two events. ``ts`` is when the hook finished writing it (its modification time).

The writer does not rename: a payload is one JSON object, and no part of one cut short is one, so
a file is whole once it parses. One that does not parse is left while it may still be written,
and set aside once it has not changed for STALE_S (a hook killed halfway). Names starting with a
dot are a writer's temporary files, left until then too. Whatever cannot be an event (not JSON,
not a hook payload, a link, a file of another user, one the log refuses) is moved to
``hooks.inbox.rejected`` beside the inbox and named in the daemon's log; it never stops the rest.

Files are taken in the order they were written, appended in batches bounded by count and bytes
(daemon/batching.py), and deleted once their batch committed; a crash in between leaves them for
the next drain, whose appends their keys make no-ops.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from daemon.batching import MAX_BATCH_BYTES, Batcher
from daemon.contract.hooks import hook_kind, tool_key
from daemon.ownership import open_private, private_dir
from store.errors import Busy, InvalidEvent, StoreError, TokaError
from store.events import NewEvent, parse_new_event

if TYPE_CHECKING:
    from collections.abc import Awaitable, Sequence
    from pathlib import Path
    from typing import Protocol

    from daemon.paths import Paths
    from store.base import AppendResult

    class Appender(Protocol):
        """The group committer, or the store itself: both append a batch and answer when committed."""

        def append(self, events: Sequence[NewEvent]) -> Awaitable[list[AppendResult]]: ...


log = logging.getLogger("toka.daemon")

# The agents whose hooks drop files here, as their names start.
AGENTS = ("claude-code", "codex")
# A file that does not parse and has not changed for this long was left by a hook that was
# killed while writing it: set aside. Long enough for a hook writing a large payload on a machine
# that is busy, short enough that what is set aside is seen the same day.
STALE_S = 60.0
# The largest payload taken: Claude Code's largest hook payloads (a tool's whole output) are a
# few MB; a larger file is no payload of a hook.
MAX_FILE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Dropped:
    """One file of the inbox, read: its event, or why it is none (``refused``), or None for
    both when it is still being written."""

    path: Path
    size: int
    event: NewEvent | None = None
    refused: str | None = None


def waiting(paths: Paths) -> bool:
    """Whether the inbox holds any file (one stat and one read of the folder when it is empty)."""
    try:
        with os.scandir(paths.inbox) as entries:
            return any(True for _ in entries)
    except (FileNotFoundError, NotADirectoryError):
        return False


async def ingest_inbox(paths: Paths, appender: Appender) -> int:
    """Append every whole payload of the inbox, in the order written, deleting each file once its
    event committed, and set aside what cannot be an event; the events created. Raises the
    store's error (or an OSError) when an append fails: the files wait for the next drain."""
    if not private_dir(paths.inbox, create=False):
        return 0
    now = time.time()
    # In the order written, read one at a time: a daemon down for long finds many files, and holds
    # one batch of them at once, never all.
    with os.scandir(paths.inbox) as entries:
        listed = sorted((_written(entry), entry.name) for entry in entries)
    batcher: Batcher[Dropped] = Batcher(MAX_BATCH_BYTES)
    created = 0
    for _, name in listed:
        dropped = _read(paths.inbox / name, now)
        if dropped.refused is not None:
            set_aside(paths, dropped.path, dropped.refused)
        elif dropped.event is not None and (full := batcher.add(dropped, dropped.size)):
            created += await _append(full, appender, paths)
    if batch := batcher.take():
        created += await _append(batch, appender, paths)
    return created


def _written(entry: os.DirEntry[str]) -> int:
    """When an inbox file was last written (ns); 0 when it is gone already."""
    try:
        return entry.stat(follow_symlinks=False).st_mtime_ns
    except FileNotFoundError:
        return 0


def _read(path: Path, now: float) -> Dropped:
    """The file at ``path``: its event, why it is none, or neither while it is being written."""
    name = path.name
    try:
        fd = open_private(path, os.O_RDONLY)  # no link followed; the user's own regular file
    except TokaError as exc:
        return Dropped(path, 0, refused=exc.message)
    except FileNotFoundError:
        return Dropped(path, 0)  # gone meanwhile
    with open(fd, "rb") as dropped:
        info = os.fstat(dropped.fileno())
        if info.st_size > MAX_FILE_BYTES:
            return Dropped(path, info.st_size, refused=f"{info.st_size} bytes, more than a hook's payload")
        raw = dropped.read()
    stale = now - info.st_mtime >= STALE_S
    agent = name.split(".", 1)[0]
    if name.startswith("."):  # a writer's temporary name: whole once it is renamed
        return Dropped(path, len(raw), refused="left by a hook that did not finish" if stale else None)
    if agent not in AGENTS:
        return Dropped(path, len(raw), refused="not named for an agent's hook (claude-code.*, codex.*)")
    try:
        payload = json.loads(raw, parse_constant=_no_constant)
    except _NotJSON as exc:
        return Dropped(path, len(raw), refused=str(exc))
    except (ValueError, RecursionError) as exc:
        # Not whole yet (a hook still writing it), or never will be (a hook killed halfway).
        why = f"not a whole payload ({exc})" if raw.strip() else "empty"
        return Dropped(path, len(raw), refused=why if stale else None)
    try:
        event = parse_new_event(_event(payload, name, info))
    except InvalidEvent as exc:
        return Dropped(path, len(raw), refused=exc.message)
    return Dropped(path, len(raw), event=event)


def _event(payload: Any, name: str, info: os.stat_result) -> dict[str, Any]:
    """The event `toka hook` makes of ``payload`` (toka_cli/hook.py, ``hook_event``)."""
    if not isinstance(payload, dict):
        raise InvalidEvent(f"the payload is a JSON {type(payload).__name__}, not an object")
    session = payload.get("session_id")
    if not isinstance(session, str) or not session:
        raise InvalidEvent("the payload has no session_id")
    kind = hook_kind(payload.get("hook_event_name"))
    # This file's own occurrence: the same file read again gives the same key, another file
    # (a pid's name used again later, the same bytes) another one.
    drawn = hashlib.sha256(f"{name}:{info.st_ino}:{info.st_mtime_ns}".encode()).hexdigest()[:32]
    return {
        "session": session,
        "kind": kind,
        "agent": "main",
        "ts": info.st_mtime,
        "key": tool_key(kind, payload) or f"{kind}:{drawn}",
        "payload": payload,
    }


async def _append(batch: list[Dropped], appender: Appender, paths: Paths) -> int:
    """Append a batch and delete its files; when the log refuses it (not when the store fails),
    each event alone, the refused ones set aside."""
    try:
        results = await appender.append([dropped.event for dropped in batch if dropped.event is not None])
    except (StoreError, Busy):
        raise  # the store, not the events: all of them wait for the next drain
    except TokaError as exc:
        if len(batch) > 1:
            return sum([await _append([dropped], appender, paths) for dropped in batch])
        set_aside(paths, batch[0].path, exc.message)
        return 0
    for dropped in batch:
        dropped.path.unlink(missing_ok=True)
    return sum(result.created for result in results)


def set_aside(paths: Paths, path: Path, why: str) -> None:
    """Move an inbox file that is no event to ``hooks.inbox.rejected``, and say so."""
    private_dir(paths.inbox_rejected)
    kept = paths.inbox_rejected / f"{path.name}.{time.time_ns()}"
    try:
        os.rename(path, kept)
    except FileNotFoundError:
        return
    log.warning("hook inbox: %s is no hook event (%s); kept as %s", path.name, why, kept)


class _NotJSON(ValueError):
    """JSON with a constant the store cannot hash (NaN, Infinity): whole, and refused."""


def _no_constant(name: str) -> Any:
    raise _NotJSON(f"{name} is not a JSON value")
