"""Copying the log into a PostgreSQL database: ``toka admin copy --to URL`` (docs/postgres-copy.md).

The log is read in seq order, a page at a time, and each page appended to the target as events
with explicit parents, so that every event gets the id it has here (an id hashes the whole
header, its parents included) and the target's sessions chain as they do here. The store's
Sealer answers an event the target holds already instead of writing it again, so a copy that was
interrupted, or that runs again after the log grew, writes only what the target lacks; and a page
the target holds whole is not even sent: one indexed lookup of its ids skips it, so resuming
costs little more than reading the log. Each page is one transaction on the target, so the
target holds whole pages only.

Before it writes, the target is looked at as `toka doctor` looks at it (store/postgres/health.py):
it must answer, be empty or toka's, not be of a newer toka, and let the role do what the daemons
will do there. After the copy the target is verified. The URL's password is in nothing this
reports: the target is named by its redacted URL, and errors are scrubbed of it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from daemon.rpc.wire import verify_json
from store.base import EventQuery, EventStore, VerifyReport
from store.errors import ConfigError, SchemaTooNew, StoreError, StoreUnavailable, TokaError, UsageError
from store.events import Event, NewEvent
from store.url import scrubbed

if TYPE_CHECKING:
    from store.postgres.health import PostgresHealth
    from store.postgres.store import PostgresStore

# Events per page: one read here, one lookup and at most one transaction there.
PAGE = 1000
UNREACHABLE_HINT = (
    "check that the server runs and that the URL names its host, port, database and user"
    " (a password belongs in ~/.pgpass); a copy that stopped resumes where it stopped when run again"
)

Progress = Callable[[int, int], None]


@dataclass
class Copied:
    """What a copy did: the ``admin.copy`` answer (docs/json.md, `toka admin copy --json`)."""

    target: str
    events: int = 0  # events read from the log
    copied: int = 0  # written to the target
    present: int = 0  # the target held them already
    mismatched: int = 0  # the target answered another id: its key is another event's there
    sessions: set[str] = field(default_factory=set)
    seconds: float = 0.0
    verify: VerifyReport | None = None
    verify_seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        assert self.verify is not None
        return {
            "target": self.target,
            "events": self.events,
            "copied": self.copied,
            "present": self.present,
            "mismatched": self.mismatched,
            "sessions": len(self.sessions),
            "seconds": round(self.seconds, 3),
            "verify": verify_json(self.verify),
            "verify_seconds": round(self.verify_seconds, 3),
        }


async def copy_log(
    source: EventStore, url: str, progress: Progress | None = None, gone: asyncio.Event | None = None
) -> Copied:
    """Copy every event of ``source`` into the PostgreSQL database at ``url``, then verify it there.
    Progress counts the events copied, then those verified: ``2 * events`` steps in all. When
    ``gone`` is set (the client hung up), the copy stops after the page it is writing."""
    try:
        target = await open_target(url)
        try:
            return await _copy(source, target, progress, gone)
        finally:
            await target.close()
    except StoreUnavailable as exc:
        raise StoreUnavailable(scrubbed(exc.message, url), UNREACHABLE_HINT) from None
    except TokaError as exc:
        raise type(exc)(scrubbed(exc.message, url), exc.hint and scrubbed(exc.hint, url)) from None


async def open_target(url: str) -> PostgresStore:
    """The target, checked first and then opened (which applies the schema steps it lacks)."""
    try:
        from store.postgres.health import inspect_postgres, url_problem
        from store.postgres.store import PostgresStore
    except ImportError:
        raise ConfigError(
            "copying into PostgreSQL needs psycopg, which is not installed", "pip install 'toka[postgres]'"
        ) from None
    problem = url_problem(url)
    if problem is not None:
        raise UsageError(
            f"the copy's target is not a PostgreSQL URL: {problem}", "e.g. postgresql://USER@HOST:5432/DATABASE"
        )
    refusal = refused(await asyncio.to_thread(inspect_postgres, url))
    if refusal is not None:
        raise refusal
    return await PostgresStore.open(url)


def refused(health: PostgresHealth) -> TokaError | None:
    """Why the copy must not write to the database ``health`` describes, or None."""
    where = health.location
    if not health.reachable:
        return StoreUnavailable(f"the copy's target {where} cannot be reached: {health.error}", UNREACHABLE_HINT)
    if health.error is not None:
        return StoreError(f"the copy's target {where} cannot be read: {health.error}")
    if not health.toka_database and health.other_tables:
        return StoreError(
            f"the copy's target {where} is not a toka database: it holds other tables"
            f" ({', '.join(health.other_tables[:5])}{', ...' if len(health.other_tables) > 5 else ''})",
            "copy into an empty database (createdb toka) or one that toka set up",
        )
    if health.schema_unknown:
        return SchemaTooNew(
            f"the copy's target {where} was written by a newer toka (schema step {health.schema_unknown[0]})",
            "upgrade this toka first: pip install -U 'toka[postgres]'",
        )
    if health.missing:
        lacking = "; ".join(f"{', '.join(m.privileges)} on {m.type} {m.name}" for m in health.missing)
        return StoreError(
            f"the role {health.user} lacks rights on the copy's target {where}: {lacking}",
            "as the database's owner: " + "; ".join(m.grant for m in health.missing),
        )
    return None


async def _copy(
    source: EventStore, target: PostgresStore, progress: Progress | None, gone: asyncio.Event | None
) -> Copied:
    report = Copied(target.location)
    total = sum(info.events for info in await source.sessions())
    started = time.perf_counter()
    async with aclosing(_pages(source)) as pages:
        async for page in pages:
            await _copy_page(page, target, report)
            if gone is not None and gone.is_set():
                raise TokaError(
                    f"the client hung up: the copy stopped after {report.events} events", "run it again to resume"
                )
            total = max(total, report.events)  # the log grew meanwhile
            if progress is not None:
                progress(report.events, 2 * total)
    report.seconds = time.perf_counter() - started
    started = time.perf_counter()

    def verifying(done: int, of: int) -> None:
        if progress is not None:
            progress(total + (done * total // of if of else total), 2 * total)

    report.verify = await target.verify(None, verifying)
    report.verify_seconds = time.perf_counter() - started
    return report


async def _pages(source: EventStore) -> AsyncGenerator[list[Event]]:
    """The log's events in seq order, PAGE at a time; the next page is read while the last is
    written."""
    reading = asyncio.ensure_future(source.query(EventQuery(after_seq=0, limit=PAGE)))
    try:
        while True:
            page = await reading
            if len(page) < PAGE:
                if page:
                    yield page
                return
            reading = asyncio.ensure_future(source.query(EventQuery(after_seq=page[-1].seq, limit=PAGE)))
            yield page
    finally:
        if not reading.done():
            reading.cancel()
        elif not reading.cancelled():
            reading.exception()  # seen: a read that failed while its page was not wanted any more


async def _copy_page(page: list[Event], target: PostgresStore, report: Copied) -> None:
    report.events += len(page)
    report.sessions.update(event.session for event in page)
    held = await target.present([event.id for event in page])
    report.present += len(held)
    missing = [event for event in page if event.id not in held]
    if not missing:
        return
    results = await target.append([_as_new(event) for event in missing])
    for event, result in zip(missing, results, strict=True):
        if result.event.id != event.id:
            report.mismatched += 1
        elif result.created:
            report.copied += 1
        else:
            report.present += 1  # another copy wrote it in between


def _as_new(event: Event) -> NewEvent:
    """The event as an append that seals it again to the same id: explicit parents, its own time."""
    return NewEvent(event.session, event.kind, event.payload, event.agent, event.ts, event.parents, event.key)
