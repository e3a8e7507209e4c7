"""The pidfile lock: one daemon per data dir, held for the daemon's lifetime."""

from __future__ import annotations

import contextlib
import fcntl
import os
from typing import IO

from daemon.ownership import open_private
from daemon.paths import Paths
from store.errors import TokaError


class PidLock:
    """An exclusive lock on the pidfile, held for the daemon's lifetime."""

    def __init__(self, paths: Paths) -> None:
        self._path = paths.pidfile
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        # Held open: the lock lives as long as it.
        handle = open(open_private(self._path, os.O_RDWR | os.O_CREAT), "r+")  # noqa: SIM115
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            pid = handle.read().strip() or "?"
            handle.close()
            raise TokaError(
                f"a toka daemon is already running for this data dir (pid {pid})",
                "stop it with `toka daemon stop`, or set TOKA_HOME to use another data dir",
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._file = handle

    def release(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._path.unlink()
            self._file.close()
            self._file = None
