"""The hook spool's writer: events that agent hooks record while the daemon is down.

A hook runs on every tool call, so it must never block its agent and never start the daemon
(a cold start costs about 200 ms). When the daemon is unreachable, the hook appends its event,
one JSON line, to ``paths.spool`` in the data dir. Concurrent hooks never interleave: each line
is written with O_APPEND under an exclusive ``flock``, and a line left half-written by a killed
hook is closed with a newline before the next one, so it costs only itself. The daemon ingests
the spool when it starts (daemon/ingest/spool.py).

The spool is opened as every file of toka's is (daemon/ownership.py): in a data dir of the user's own,
without following a link, refused when another user owns it. Importing this module loads no
more than ``os``, ``fcntl`` and the paths: the hook imports it.
"""

from __future__ import annotations

import fcntl
import os

from daemon.ownership import open_private, private_dir


def append_to_spool(path: str | os.PathLike[str], line: bytes) -> None:
    """Append one line (one event as JSON) to the spool at ``path`` (``Paths.spool``), whole,
    safe beside concurrent hooks."""
    if not line.endswith(b"\n"):
        line += b"\n"
    private_dir(os.path.dirname(path))
    while True:
        fd = open_private(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            # The daemon may have claimed (renamed) the file between our open and our lock; the
            # line then belongs in a new spool, or it would be deleted unread with the claimed one.
            try:
                current = os.path.samestat(os.fstat(fd), os.lstat(path))
            except FileNotFoundError:
                current = False
            if not current:
                continue
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line  # a hook killed mid-write left half a line: end it there
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
            return
        finally:
            os.close(fd)  # and with it the lock
