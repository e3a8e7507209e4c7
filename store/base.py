"""The store interface every backend implements, and the logic they share.

Backends differ only in where rows live. What an append *means* (default parents chain onto
the session's head, idempotency keys and ids return the existing event, the header is hashed)
is decided once, in store/sealer.py's :class:`Sealer`, and what a correct log *is* is checked
once, in store/chain.py's :class:`ChainVerifier`; both take the backend's lookups as plain
callables, so the SQLite backend can run them inside one call on its connection thread.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from store.damage import Damage
from store.errors import Ambiguous, NotFound, UsageError
from store.events import Event, NewEvent
from store.retention import Collected, Pruned
from store.search import SearchHit, SearchQuery
from store.tip import Tip
from store.usage import BUCKET_US, Claims, UsageRow, fold_usage, sum_usage, usage_row

if TYPE_CHECKING:
    from store.merkle import Frontier, LogLeaf, Node
    from store.vectors import VectorIndex  # imported by the backends that keep vectors

# How many events a replay or verify reads per round trip: big enough that the per-call cost
# vanishes, small enough that memory stays flat on any session.
CHUNK = 1000
# A verify report lists at most this many problems; the count covers them all.
MAX_PROBLEMS = 100


@dataclass(frozen=True, slots=True)
class AppendResult:
    event: Event
    created: bool  # False when an idempotency key or identical id already held it


@dataclass(frozen=True, slots=True)
class EventQuery:
    """A filter over the log. Times are UTC microseconds; ``since`` inclusive, ``until`` not."""

    session: str | None = None
    kinds: tuple[str, ...] = ()  # exact kinds, or a prefix written as "tool.*"
    since: int | None = None
    until: int | None = None
    after_seq: int | None = None
    before_seq: int | None = None
    limit: int | None = None
    order: Literal["asc", "desc"] = "asc"


@dataclass(frozen=True, slots=True)
class SessionInfo:
    session: str
    events: int
    first_seq: int
    last_seq: int
    first_ts: int
    last_ts: int
    head: str
    agents: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Problem:
    seq: int
    id: str
    session: str
    # id, digest, payload, chain, head: the chain check (store/chain.py); database, truncated,
    # missing, replaced: the database's own check and the recorded tip (store/sqlite/integrity.py);
    # missing, replaced, truncated, signed: the check against the signed tree heads
    # (store/merkle_check.py); refused: the daemon will not sign the log as it is (daemon/heads/)
    what: Literal[
        "id", "digest", "payload", "chain", "head", "database", "truncated", "missing", "replaced", "signed", "refused"
    ]
    detail: str


@dataclass(frozen=True, slots=True)
class VerifyReport:
    session: str | None
    events: int
    problems: tuple[Problem, ...]
    problem_count: int

    @property
    def ok(self) -> bool:
        return self.problem_count == 0


@dataclass(frozen=True, slots=True)
class DatabaseCheck:
    """What the database says of itself: its own check's lines (SQLite's ``quick_check``, or
    ``integrity_check`` when deep), the log's recorded tip (store/tip.py), the damage the store
    has seen (store/damage.py), and all that as problems in verify's terms."""

    check: str
    found: tuple[str, ...]
    tip: Tip | None  # the last event committed, as recorded
    damaged: Damage | None
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def merged(self, report: VerifyReport) -> VerifyReport:
        """``report`` with these problems first: they explain whatever the chain shows."""
        problems = (*self.problems, *report.problems)[:MAX_PROBLEMS]
        return replace(report, problems=problems, problem_count=report.problem_count + len(self.problems))


@dataclass(frozen=True, slots=True)
class Stats:
    events: int
    sessions: int
    # The payloads stored: the distinct ones of blobs, and on SQLite each small one kept in its
    # event's row, once per event that has it (store/rows.py, INLINE_BELOW).
    blobs: int
    payload_bytes: int  # what the events' payloads add up to, as if each were stored alone
    blob_bytes: int  # the payloads stored, uncompressed
    stored_bytes: int  # the same as they are stored (compressed where it paid)
    disk_bytes: int  # database files on disk (0 for the memory backend)

    @property
    def dedup_ratio(self) -> float:
        return self.payload_bytes / self.blob_bytes if self.blob_bytes else 1.0


ProgressCallback = Callable[[int, int], None]


def _bucket_edge(ts: int | None) -> int | None:
    """The first bucket edge at or after ``ts``: a bucket starts before ``ts`` exactly when its
    events are before this edge."""
    return None if ts is None else -(-ts // BUCKET_US) * BUCKET_US


def resolve_prefix(prefix: str, candidates: Sequence[str], what: str) -> str:
    """Git-style: an exact match wins, else the one candidate starting with ``prefix``."""
    if prefix in candidates:
        return prefix
    if not candidates:
        raise NotFound(f"no {what} matches {prefix!r}", f"list them with `toka {what}s`")
    if len(candidates) > 1:
        shown = ", ".join(sorted(candidates)[:5])
        raise Ambiguous(
            f"{what} prefix {prefix!r} is ambiguous ({shown}{', ...' if len(candidates) > 5 else ''})",
            "type more characters",
        )
    return candidates[0]


class EventStore(abc.ABC):
    """What the daemon needs from a backend. All methods are coroutines."""

    # Whether other daemons may append to the same log (PostgreSQL): the daemon then follows it.
    shared = False

    async def follow(self, changed: Callable[[], None], reconnected: Callable[[], None]) -> None:
        """For a shared log: call ``changed()`` whenever another daemon may have appended, and
        ``reconnected()`` when the database is back after an outage, until cancelled."""
        return None  # a log no one else writes has nothing to follow

    def connection_state(self) -> dict[str, Any] | None:
        """For a database behind a connection: whether it answers (status and doctor show it)."""
        return None

    def damage(self) -> Damage | None:
        """Why the database was found damaged, after which it takes no writes; None while sound
        (and for backends whose server looks after its own files)."""
        return None

    def mark_damaged(self, reason: str) -> None:
        """Take a check made elsewhere (doctor's) that found the database damaged."""
        return None

    async def check_database(self, deep: bool = False) -> DatabaseCheck | None:
        """The database's own check of its file (more thorough when ``deep``) and of the log
        against its recorded tip; None for a backend that has none."""
        return None

    @abc.abstractmethod
    async def append(self, batch: Sequence[NewEvent], *, alone: bool = False) -> list[AppendResult]:
        """Append atomically: all of the batch commits, or none of it. ``alone``: no other append
        waits behind this one (a lone writer), so a backend may commit a small batch without
        handing it to another thread first (SQLite does).

        An event whose key its session holds already is not written: its result is the event
        holding it, ``created`` False. Every backend decides that in the transaction of the
        append (PostgreSQL under the lock all daemons' appends take), so a key naming one step
        (a memory key's version, a state change's predecessor) is a compare-and-set between
        writers that cannot see each other's tables."""

    def unprojected(self) -> int:
        """Events committed that the derived tables (search, sessions, usage, the Merkle tree) have
        not applied yet; a backend that applies them in the append's transaction has none."""
        return 0

    async def project(self) -> None:
        """Apply every event committed so far to the derived tables. Each read of those tables
        does so first, so it sees every append acknowledged before it; the daemon's projector
        (daemon/server/projector.py) does so behind the commits, a batch at a time."""
        return None

    @abc.abstractmethod
    async def get(self, event_id: str) -> Event:
        """The event with this id, or with the only id starting with it (NotFound, Ambiguous)."""

    @abc.abstractmethod
    async def get_by_seq(self, seq: int) -> Event: ...

    @abc.abstractmethod
    async def payload(self, digest: str) -> tuple[str, dict[str, Any]]:
        """(full digest, payload) of a stored payload, by its blake3 digest or a unique prefix."""

    @abc.abstractmethod
    async def query(self, query: EventQuery) -> list[Event]: ...

    async def query_json(self, query: EventQuery) -> list[tuple[int, str]]:
        """``query``'s events as (seq, JSON text in the shape of ``Event.to_json()``).

        For answering over the wire without parsing payloads; backends that keep payloads as
        bytes override it to splice them in as they are.
        """
        return [(event.seq, event.to_json_text()) for event in await self.query(query)]

    async def count(self, query: EventQuery) -> int:
        """How many events ``query`` matches (its limit and order are not used)."""
        return sum([1 async for _ in self.scan(query)])

    async def scan(self, query: EventQuery, page: int = 5000) -> AsyncIterator[Event]:
        """Every event ``query`` matches, oldest first, read ``page`` at a time (its limit and
        order are not used): for folding a kind of event over the whole log."""
        after = query.after_seq or 0
        while True:
            found = await self.query(replace(query, after_seq=after, limit=page, order="asc"))
            for event in found:
                yield event
            if len(found) < page:
                return
            after = found[-1].seq

    async def usage_rows(
        self, since: int | None = None, until: int | None = None, session: str | None = None
    ) -> list[UsageRow]:
        """The usage projection's rows (store/usage.py) of the buckets that start at or after
        ``since`` and before ``until`` (UTC microseconds), of one ``session`` or of all, folded
        here from the usage events; a backend that keeps the projection in a table reads it."""
        claims = Claims()  # a request counts as its first source reported it, so the whole log is read
        start, end = _bucket_edge(since), _bucket_edge(until)
        rows = [
            usage_row(e.ts, e.session, e.agent, e.payload)
            async for e in self.scan(EventQuery(session=session, kinds=("usage",)))
            if claims.counts(e.session, e.payload) and (start is None or e.ts >= start) and (end is None or e.ts < end)
        ]
        return fold_usage(rows)

    async def usage_sums(
        self,
        since: int | None = None,
        until: int | None = None,
        *,
        width: int = BUCKET_US,
        offset: int = 0,
        sessions: bool = False,
        session: str | None = None,
        models: Sequence[str] | None = None,
    ) -> list[UsageRow]:
        """The rows of :meth:`usage_rows` (of one ``session``, of ``models`` only), summed per
        period of ``width`` microseconds (periods start where ``bucket + offset`` is a multiple
        of ``width``), UTC day, model and prompt class, and per session and agent when
        ``sessions`` (store/usage.py's ``sum_usage``): what a report per day needs, in a few
        thousand rows where the projection holds hundreds of thousands. A backend with the
        projection in a table sums it in SQL (:meth:`_sum_usage`); this sums in Python."""
        chosen = None if models is None else list(models)
        return await self._sum_usage(since, until, width, offset, sessions, session, chosen)

    async def _sum_usage(
        self,
        since: int | None,
        until: int | None,
        width: int,
        offset: int,
        sessions: bool,
        session: str | None,
        models: list[str] | None,
    ) -> list[UsageRow]:
        rows = await self.usage_rows(since, until, session)
        if models is not None:
            rows = [row for row in rows if row.model in models]
        return sum_usage(rows, width, offset, sessions)

    @abc.abstractmethod
    async def sessions(self) -> list[SessionInfo]:
        """Every session, the one last active first: by ``last_ts``, the time of its latest event
        of the agent's own activity (store/kinds.py), then seq."""

    async def totals(self) -> tuple[int, int]:
        """How many events and sessions the log holds (a backend may count them cheaper)."""
        sessions = await self.sessions()
        return sum(s.events for s in sessions), len(sessions)

    @abc.abstractmethod
    async def session(self, name: str) -> SessionInfo:
        """A session by name or unique prefix."""

    async def replay(self, session: str, to_seq: int | None = None) -> AsyncIterator[Event]:
        """The session's events in order up to ``to_seq``, read in chunks: memory stays flat."""
        until = None if to_seq is None else to_seq + 1
        async for event in self.scan(EventQuery(session=session, before_seq=until), page=CHUNK):
            yield event

    @abc.abstractmethod
    async def verify(self, session: str | None = None, progress: ProgressCallback | None = None) -> VerifyReport: ...

    @abc.abstractmethod
    async def stats(self) -> Stats: ...

    # The log's Merkle tree (store/merkle.py, docs/tamper-evidence.md), kept by the SQLite
    # backend, which also checks it (store/merkle_check.py's CheckedLog). The memory backend
    # keeps none: a log gone at exit has nothing to prove.

    async def tree(self) -> Frontier | None:
        """The committed tree's frontier (its size and root); None when no tree is kept."""
        return None

    async def tree_nodes(self, nodes: Sequence[Node]) -> dict[Node, bytes]:
        """The stored hashes of complete subtrees, for proofs."""
        raise UsageError(f"the log at {self.location} keeps no Merkle tree", "run the daemon on a SQLite log")

    async def tree_leaf(self, event_id: str) -> LogLeaf:
        """The leaf of the event with this id (or unique id prefix), pruned or not."""
        raise UsageError(f"the log at {self.location} keeps no Merkle tree", "run the daemon on a SQLite log")

    # Cursors (store/cursors.py): where a reader of the log that must survive restarts stands.

    @abc.abstractmethod
    async def cursor(self, name: str) -> str | None:
        """The value saved under ``name``; None when none was."""

    @abc.abstractmethod
    async def save_cursor(self, name: str, value: str) -> None:
        """Save ``value`` under ``name``, replacing what was; durable once it returns."""

    @abc.abstractmethod
    async def rebuild_projections(self) -> int:
        """Recreate the query tables from the events; returns the number of sessions."""

    @abc.abstractmethod
    async def search(self, query: SearchQuery) -> list[SearchHit]:
        """Events whose indexed text matches ``query.text``, best first (store/search.py).

        A query that is not valid search syntax raises UsageError with a hint.
        """

    def vectors(self) -> VectorIndex:
        """The vectors of semantic recall (store/vectors.py); UsageError where none are kept."""
        raise UsageError(
            f"the log at {self.location} keeps no vectors, which semantic recall needs",
            "run the daemon on a SQLite or PostgreSQL log (not --memory), or search by words (--fts)",
        )

    @abc.abstractmethod
    async def rebuild_search_index(self) -> int:
        """Recreate the search index from the events; returns the number of events indexed."""

    async def prune(self, session: str, before: int, dry_run: bool = False) -> Pruned | None:
        """Replace the events of ``session`` older than ``before`` (the longest such prefix) by a
        checkpoint (store/retention.py); None when nothing is that old."""
        raise UsageError(
            f"the log at {self.location} cannot be pruned: only the SQLite backend keeps history",
            "run the daemon on its SQLite log (without --memory)",
        )

    async def collect_garbage(self, keep: Sequence[str] = (), dry_run: bool = False) -> Collected:
        """Delete the payloads no event refers to, but those in ``keep``."""
        raise UsageError(
            f"the log at {self.location} has no payloads to collect: only the SQLite backend keeps history",
            "run the daemon on its SQLite log (without --memory)",
        )

    async def disk_bytes(self) -> int:
        """What the log takes on disk (0 where it keeps nothing there): ``stats().disk_bytes``
        without counting the log."""
        return 0

    async def vacuum(self) -> None:
        """Give the space freed by prune and gc back to the file system."""
        return None  # nothing to give back where nothing is kept on disk

    @abc.abstractmethod
    async def close(self) -> None: ...

    @property
    @abc.abstractmethod
    def location(self) -> str:
        """Where the data lives, for status output."""
