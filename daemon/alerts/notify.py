"""Running ``[alerts] command`` with an alert as JSON on stdin, without ever holding the daemon up.

Each run is a task of its own: a shell command (so ``notify-send ...`` or a webhook script with
its arguments can be written as in a terminal) in a session of its own, given the alert on stdin
and as ``TOKA_ALERT_TYPE``, ``TOKA_ALERT_LEVEL`` and ``TOKA_ALERT_MESSAGE`` in its environment,
stopped (its whole process group) after ``command_timeout_s``. A failure is logged, nothing more. The
same alert topic (an agent's state, a block's limit) runs the command at most once per
``command_interval_s``, and at most :data:`MAX_RUNNING` commands run at once; the alert itself is
recorded in the log whatever the command does, with what became of it (``command``: ``run``,
``rate_limited``, ``busy`` or ``none``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import Callable
from typing import Any

from daemon.alerts.settings import AlertSettings
from daemon.tasks import finish_or_cancel

log = logging.getLogger("toka.daemon")

# Commands running at once: an alert storm must not fork a process per alert.
MAX_RUNNING = 4


class Notifier:
    def __init__(self, settings: AlertSettings, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.clock = clock
        self._last: dict[str, float] = {}  # topic -> when the command last ran for it
        self._running: set[asyncio.Task[None]] = set()

    def decide(self, topic: str) -> str:
        """Whether the command runs for an alert of ``topic`` now: ``run`` (and it is counted as
        run), ``rate_limited``, ``busy`` or ``none`` (no command)."""
        if not self.settings.command.strip():
            return "none"
        now = self.clock()
        last = self._last.get(topic)
        if last is not None and now - last < self.settings.command_interval_s:
            return "rate_limited"
        if len(self._running) >= MAX_RUNNING:
            return "busy"
        self._last[topic] = now
        return "run"

    def run(self, alert: dict[str, Any]) -> None:
        """Start the command for ``alert``; returns at once."""
        task = asyncio.create_task(self._run(alert), name="alert-command")
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _run(self, alert: dict[str, Any]) -> None:
        env = {
            **os.environ,
            "TOKA_ALERT_TYPE": str(alert.get("type", "")),
            "TOKA_ALERT_LEVEL": str(alert.get("level", "")),
            "TOKA_ALERT_MESSAGE": str(alert.get("message", "")),
        }
        try:
            process = await asyncio.create_subprocess_shell(
                self.settings.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            log.warning("alerts: the command could not start: %s", exc)
            return
        try:
            _, stderr = await asyncio.wait_for(
                process.communicate(json.dumps(alert).encode() + b"\n"), self.settings.command_timeout_s
            )
        except TimeoutError:
            _stop(process)
            await process.wait()
            log.warning("alerts: the command ran past %ss and was stopped", self.settings.command_timeout_s)
            return
        except asyncio.CancelledError:
            _stop(process)
            raise
        if process.returncode:
            tail = stderr.decode(errors="replace").strip().splitlines()[-1:] if stderr else []
            log.warning("alerts: the command exited %d%s", process.returncode, f": {tail[0]}" if tail else "")

    async def stop(self, deadline: float) -> None:
        """Let running commands finish within ``deadline`` seconds, then stop them."""
        await finish_or_cancel(self._running, deadline)


def _stop(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
