"""Copies of each signed head where whoever rewrites the database cannot rewrite them too.

``store.witness_path``: the head's line appended to a file (on another disk, a mount of
another machine). ``store.witness_command``: a shell command run with the head as JSON on
stdin (``git -C ~/heads commit``, a post to a server: docs/tamper-evidence.md), off the daemon's
path, one at a time: a head signed while the command runs waits, and only the newest waiting
head is sent next (each head covers all before it). Failures are logged, never fatal.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from pathlib import Path

from daemon.config import StoreSettings
from daemon.heads.record import SignedHead, append_head
from daemon.tasks import finish_or_cancel

log = logging.getLogger("toka.daemon")

# Seconds the witness command may take: a git commit or a post, not a long job.
WITNESS_TIMEOUT_S = 10.0


class Witness:
    def __init__(self, settings: StoreSettings) -> None:
        self.settings = settings
        self.path = Path(os.path.expanduser(settings.witness_path)) if settings.witness_path.strip() else None
        self._waiting: SignedHead | None = None
        self._task: asyncio.Task[None] | None = None
        self.failures = 0

    def send(self, head: SignedHead) -> None:
        if self.path is not None:
            try:
                append_head(self.path, head, sync=True)
            except OSError as exc:
                self.failures += 1
                log.warning("heads: could not append to the witness file %s: %s", self.path, exc.strerror)
        if self.settings.witness_command.strip():
            self._waiting = head
            if self._task is None or self._task.done():
                self._task = asyncio.create_task(self._run(), name="heads-witness")

    async def _run(self) -> None:
        while self._waiting is not None:
            head, self._waiting = self._waiting, None
            await self._command(head)

    async def _command(self, head: SignedHead) -> None:
        try:
            process = await asyncio.create_subprocess_shell(
                self.settings.witness_command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            self.failures += 1
            log.warning("heads: the witness command could not start: %s", exc)
            return
        try:
            _, stderr = await asyncio.wait_for(process.communicate(head.line()), WITNESS_TIMEOUT_S)
        except TimeoutError:
            _kill(process)
            await process.wait()
            self.failures += 1
            log.warning("heads: the witness command ran past %ss and was stopped", WITNESS_TIMEOUT_S)
            return
        except asyncio.CancelledError:
            _kill(process)
            raise
        if process.returncode:
            self.failures += 1
            tail = stderr.decode(errors="replace").strip().splitlines()[-1:] if stderr else []
            log.warning("heads: the witness command exited %d%s", process.returncode, f": {tail[0]}" if tail else "")

    async def stop(self, deadline: float) -> None:
        """Let the command send the last head within ``deadline`` seconds, then stop it."""
        if self._task is not None:
            await finish_or_cancel([self._task], deadline)


def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
