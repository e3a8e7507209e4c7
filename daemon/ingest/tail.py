"""Following files as they grow: read what was added since the last read, and carry on after a
restart without reading anything twice.

A :class:`Tail` keeps, per file, a parser and how far it has read (``Position``). Each
:meth:`Tail.read` reads the complete lines added since then (a last line still being written
waits for its newline), feeds them to the parser and flushes it, so what a line says is out at
once; what waits for a later line (events of a file that has not named its session yet) goes
out when the file has not grown for ``SETTLE_S``, as at the end of an import. The events come
in batches bounded by count and by the bytes of the lines they came from (daemon/batching.py),
each event with the number of its line, so that a file of large records is stored a few
megabytes at a time.

Once the caller has stored what a read gave, :meth:`Tail.commit` writes the file's
:class:`Cursor` (position, parser snapshot, the file's identity) to its own small JSON file under
``Paths.cursors``; a later Tail, in this process or another, starts from there. Should the caller
fail to store a read, :meth:`Tail.forget` drops what the Tail holds for the file, and the next
read starts again from the last cursor. Every event carries its source's key, so reading a line
twice (a crash between storing and saving the cursor) stores it once.

A file that was truncated or replaced (another inode, or the bytes before the cursor changed) is
read again from its start, its keys telling what is new.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon.batching import MAX_BATCH_BYTES, Batcher
from daemon.ingest.formats import FOLLOWERS, detect
from daemon.ingest.lines import BadLine, ParseStats, Position, read_records
from daemon.ingest.parser import NewEventDict, Parser
from daemon.ownership import open_private, private_dir, read_private
from store.errors import UnsafePath

log = logging.getLogger("toka.watch")

# An event with the number of the line it came from (see Tail.read).
Numbered = tuple[int, NewEventDict]
# Bytes at the start of a file and before a cursor's offset whose digest tells that the file
# still holds what was read.
CHECK_BYTES = 256
# How long a file stays the same size before it is taken as finished for now (see the docstring).
SETTLE_S = 5.0
# The format of a file with no complete record yet: decided once it has one.
_UNDECIDED = ""


@dataclass
class Cursor:
    """How far one file was read and stored, and the parser's state there."""

    path: str
    format: str
    inode: int
    offset: int
    line: int
    check: str  # see _check
    state: dict[str, Any]


class Cursors:
    """One JSON file per followed file, named by a digest of its path, replaced atomically;
    with no folder, nothing is kept (for a log that is not kept either)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def _file(self, path: Path) -> Path:
        assert self.folder is not None
        return self.folder / (hashlib.sha256(os.fsencode(path)).hexdigest()[:32] + ".json")

    def load(self, path: Path) -> Cursor | None:
        if self.folder is None:
            return None
        try:
            data = json.loads(read_private(self._file(path)))
            cursor = Cursor(**data)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, UnsafePath) as exc:
            log.warning("unreadable cursor for %s, reading the file from its start: %s", path, exc)
            return None
        return cursor if cursor.path == str(path) else None

    def save(self, cursor: Cursor) -> None:
        if self.folder is None:
            return
        private_dir(self.folder)
        target = self._file(Path(cursor.path))
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        with open(open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "w", encoding="utf-8") as out:
            out.write(json.dumps(vars(cursor), separators=(",", ":")))  # not asdict: it deep-copies the state
        os.replace(tmp, target)


@dataclass
class _Followed:
    format: str
    inode: int
    position: Position
    parser: Parser
    size: int = -1  # as last seen
    grew_at: float = 0.0  # time.monotonic() when it was last seen growing
    settled: bool = False  # flushed as finished since it last grew


class Tail:
    def __init__(self, cursors: Cursors, fmt: str = "auto") -> None:
        self.cursors = cursors
        self.fmt = fmt
        self._files: dict[Path, _Followed] = {}
        self._refused: dict[Path, int] = {}  # files of no known format, by inode: reported once

    def __contains__(self, path: Path) -> bool:
        return path in self._files

    def read(self, path: Path, stats: ParseStats) -> Iterator[list[Numbered]]:
        """The events of the lines added to ``path`` since the last read, in batches, each with
        the number of its line (the line that released it, for an event held back); bad lines
        and a file of no known format go to ``stats.bad_lines``. Nothing for a file that is
        gone, or has no complete record yet."""
        try:
            inode, size = _identity(path)
        except OSError:
            self._files.pop(path, None)
            return
        followed = self._files.get(path)
        if followed is None or followed.inode != inode or followed.position.offset > size:
            followed = self._start(path, inode, size, stats)
            if followed is None:
                return
            self._files[path] = followed
        followed.parser.stats = stats
        now = time.monotonic()
        if size == followed.size:
            if not followed.settled and now - followed.grew_at >= SETTLE_S:
                followed.settled = True
                if settled := [(followed.position.line, e) for e in followed.parser.flush(end=True)]:
                    yield settled
            return
        followed.size, followed.grew_at, followed.settled = size, now, False
        batcher: Batcher[Numbered] = Batcher(MAX_BATCH_BYTES)
        for number, raw, record in read_records(path, stats, followed.position, follow=True):
            weight = len(raw)  # a line's bytes weigh on its first event
            for event in followed.parser.feed(number, raw, record):
                if full := batcher.add((number, event), weight):
                    yield full
                weight = 0
        for event in followed.parser.flush(end=False):
            if full := batcher.add((followed.position.line, event), 0):
                yield full
        if batch := batcher.take():
            yield batch

    def commit(self, path: Path) -> None:
        """Save the cursor of ``path``: everything the last read gave is stored."""
        followed = self._files.get(path)
        if followed is None:
            return
        position = followed.position
        cursor = Cursor(
            path=str(path),
            format=followed.format,
            inode=followed.inode,
            offset=position.offset,
            line=position.line,
            check=_check(path, position.offset),
            state=followed.parser.snapshot(),
        )
        self.cursors.save(cursor)

    def forget(self, path: Path) -> None:
        """Drop what was read of ``path`` since its last commit: the next read starts there."""
        self._files.pop(path, None)

    def _start(self, path: Path, inode: int, size: int, stats: ParseStats) -> _Followed | None:
        cursor = self.cursors.load(path)
        if cursor is not None and _still_valid(cursor, path, inode, size):
            factory = FOLLOWERS[cursor.format]
            parser = factory(path, stats, cursor.state)
            return _Followed(cursor.format, inode, Position(cursor.offset, cursor.line), parser)
        if self._refused.get(path) == inode:
            return None
        fmt = self.fmt if self.fmt != "auto" else detect(path, empty=_UNDECIDED)
        if fmt == _UNDECIDED:
            return None
        if fmt is None:
            self._refused[path] = inode
            stats.bad_lines.append(BadLine(str(path), 0, "not a format toka knows (name one with --format)"))
            return None
        return _Followed(fmt, inode, Position(), FOLLOWERS[fmt](path, stats, None))


def _identity(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_ino, stat.st_size


def _check(path: Path, offset: int) -> str:
    """A digest of the file's first and last CHECK_BYTES before ``offset``."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            digest.update(handle.read(min(offset, CHECK_BYTES)))
            start = max(offset - CHECK_BYTES, 0)
            handle.seek(start)
            digest.update(handle.read(offset - start))
    except OSError:
        return ""
    return digest.hexdigest()[:32]


def _still_valid(cursor: Cursor, path: Path, inode: int, size: int) -> bool:
    """Whether the file is the one the cursor was saved for, grown or as it was."""
    return (
        cursor.format in FOLLOWERS
        and cursor.inode == inode
        and cursor.offset <= size
        and cursor.check == _check(path, cursor.offset)
    )
