"""Group commit: appends that arrive together share one transaction.

Each append request waits on a future. One task takes every request queued at that moment and
writes them in one store call (one transaction, one fsync); requests that arrive while it writes
form the next group. No timer is involved: a lone writer pays for one commit and no waiting,
many concurrent writers share commits. A request that finds nothing queued and nothing being
written commits in its own task, without waking the committer's (two turns of the event loop
fewer for a lone writer); requests that arrive meanwhile queue for the committer as before. A
request whose client has sent more appends behind it (``followed``, set by the connection that
read them: daemon/server/serving.py) always queues, so that the ones behind it, decoded in the
same turn of the event loop, share its commit instead of each committing alone; so does one
that finds other callbacks waiting in the event loop's turn (other connections' requests read
in the same wake-up).
A request is answered only after its group committed.
If a group fails, its requests are retried one by one, so one bad request fails alone. Whatever
handing committed events over raises (daemon/server/projections.py skips what a projection cannot
apply; this is for the rest) is logged, and the committer goes on committing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar

from daemon.component import Component
from store.base import AppendResult, EventStore
from store.errors import Busy, TokaError
from store.events import Event, NewEvent

log = logging.getLogger("toka.daemon")

# Upper bound on the events one transaction takes, so that one huge group cannot hold the write
# lock for long while other appends wait.
MAX_GROUP_EVENTS = 20_000

# Set in the context of an append whose client has sent more appends behind it.
followed: ContextVar[bool] = ContextVar("followed", default=False)

Pending = tuple[list[NewEvent], "asyncio.Future[list[AppendResult]]"]
# Given the events whose keys the log already held, each with the event holding it: the events
# to append after them (see daemon.usage.output_revisions).
Amend = Callable[[list[tuple[NewEvent, Event]]], Awaitable[list[NewEvent]]]


class GroupCommitter(Component):
    def __init__(
        self,
        store: EventStore,
        on_commit: Callable[[list[Event]], None],
        amend: Amend | None = None,
        turn: asyncio.Lock | None = None,
    ) -> None:
        self._store = store
        # Held from a group's append until its events are handed over (daemon/server/follow.py).
        self._turn = turn
        self._on_commit = on_commit
        self._amend = amend
        self._pending: deque[Pending] = deque()
        self._writing = asyncio.Lock()  # held while a group is written, by either path
        self._wake = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self.groups = 0  # transactions committed, for status and tests

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="group-commit")

    async def append(self, events: Sequence[NewEvent]) -> list[AppendResult]:
        if self._closing:
            raise Busy("the daemon is shutting down", "retry once it has restarted")
        future: asyncio.Future[list[AppendResult]] = asyncio.get_running_loop().create_future()
        if not self._pending and not self._writing.locked() and not followed.get() and not _others_runnable():
            # Nothing to group with: written here. The lock is free, so taking it does not yield,
            # and requests that come while this one is written queue for the committer.
            async with self._writing, self._turn or contextlib.nullcontext():
                await self._commit([(list(events), future)])
            if self._pending:
                self._wake.set()
            return await future
        self._pending.append((list(events), future))
        self._wake.set()
        return await future

    async def stop(self, deadline: float = 0.0) -> None:
        """Commit what is queued, then stop (however long that takes: what was answered
        committed must be committed)."""
        self._closing = True
        self._wake.set()
        if self._task is not None:
            await self._task
        async with self._writing:  # and a request's own commit, if one is being written
            pass

    def _take_group(self) -> list[Pending]:
        group: list[Pending] = []
        size = 0
        while self._pending and (not group or size + len(self._pending[0][0]) <= MAX_GROUP_EVENTS):
            item = self._pending.popleft()
            group.append(item)
            size += len(item[0])
        return group

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._pending:
                async with self._writing, self._turn or contextlib.nullcontext():
                    await self._commit(self._take_group())
            if self._closing and not self._pending:
                return

    async def _commit(self, group: list[Pending]) -> None:
        batch = [e for events, _ in group for e in events]
        try:
            results = await self._store.append(batch, alone=not self._pending)
        except Exception as exc:
            if len(group) > 1:
                # Whatever failed (bad input the store let through, or a bug), it may be one
                # request's doing: the others must not fail with it.
                log.warning("group of %d appends failed (%s); retrying one by one", len(group), exc)
                for item in group:
                    await self._commit([item])
                return
            if not isinstance(exc, TokaError):  # a bug, not bad input: fail it, keep serving
                log.exception("append failed")
                exc = TokaError(f"internal error while appending: {exc}")
            _settle(group[0][1], exc)
            return
        self.groups += 1
        created = [r.event for r in results if r.created]
        held = [(new, r.event) for new, r in zip(batch, results, strict=True) if not r.created]
        if held and self._amend is not None:
            # Before the answers: a client that reads the log after its append sees the amendment.
            created += await self._amended(held)
        start = 0
        for events, future in group:
            if not future.done():
                future.set_result(results[start : start + len(events)])
            start += len(events)
        if created:
            try:
                self._on_commit(created)
            except Exception:  # the events are committed and answered: the next groups must be too
                log.exception(
                    "handing over %d committed events (seq %d to %d) failed",
                    len(created),
                    created[0].seq,
                    created[-1].seq,
                )

    async def _amended(self, held: list[tuple[NewEvent, Event]]) -> list[Event]:
        """The events the amend hook adds for ``held``. Its failure fails no request: what the
        requests asked for is committed, and a later read of the same source amends again."""
        assert self._amend is not None
        try:
            extra = await self._amend(held)
            return [r.event for r in await self._store.append(extra) if r.created] if extra else []
        except Exception:
            log.exception("amending %d events already held failed", len(held))
            return []


def _others_runnable() -> bool:
    """Whether other callbacks wait in this turn of the event loop: the tasks of other
    connections whose requests were read in the same wake-up, likely appends themselves. An
    append then queues for the committer, which runs after them, and they share its commit.
    CPython's event loop keeps them in ``_ready``, which is not public: a loop without it
    commits lone appends at once, as before."""
    return bool(getattr(asyncio.get_running_loop(), "_ready", None))


def _settle(future: asyncio.Future[list[AppendResult]], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)
