"""Background tasks stopped with a deadline: what is under way may finish, what is not done by
then is cancelled (the witness, the alerts' commands, the export forwarder)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection


async def finish_or_cancel(tasks: Collection[asyncio.Task[object]], deadline: float) -> None:
    """Wait up to ``deadline`` seconds for ``tasks`` to end, then cancel those still running and
    wait for them to take it."""
    if not tasks:
        return
    _, pending = await asyncio.wait(set(tasks), timeout=deadline)
    for task in pending:
        task.cancel()
    for task in pending:
        with contextlib.suppress(asyncio.CancelledError):
            await task
