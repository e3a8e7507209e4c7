"""The Merkle tree of a PostgreSQL log, as one daemon has read it (docs/tamper-evidence.md,
"PostgreSQL").

On SQLite the tree is stored with the log and grown by each append. A shared log's database has
an owner who can rewrite anything in it, a stored tree included, so here each daemon keeps its
own tree, in memory, grown from the events it reads (RFC 9162 leaves, store/merkle.py; a seq no
event holds gets the leaf of :data:`~store.merkle_check.HOLE_ID`, as the check rebuilds it), and
signs heads over it into its own heads file with its own key, outside the database
(daemon/heads/). A head then says what the log held when that daemon read it; a log rewritten
afterwards, however consistently, no longer matches it.

The tree is built from the whole log once the daemon first asks for it (one read of every
event's seq and id, in the background: store/postgres/store.py), then grown by the events committed
since, at each signature.
:func:`check_tree` rebuilds it from the log as it is now and compares it with the signed roots;
no leaf hashes are stored, so an event that differs is named by the range of seqs between the
last head that holds and the first that does not.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import replace

from psycopg import AsyncConnection

from store.base import CHUNK, Problem
from store.merkle import EMPTY, Frontier, LogLeaf, SignedRoot, leaf_hash
from store.merkle_check import HOLE_ID, TreeCheck, TreeReport
from store.postgres.reads import fetch_rows

# Seqs read per round trip while growing or checking the tree: (seq, id) rows are small.
PAGE = 10 * CHUNK
LEAVES = "SELECT seq, id FROM events WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?"
# Past any seq: growing reads to the end of the log.
END = 2**62


class LogTree:
    """This daemon's tree of the shared log: the frontier of every seq up to the last it read."""

    def __init__(self) -> None:
        self.frontier = EMPTY
        self._growing = asyncio.Lock()  # the signer and verify both grow it

    async def grow(self, conn: AsyncConnection) -> Frontier:
        """The tree grown by the events committed since it was last grown."""
        async with self._growing:
            while True:
                size = self.frontier.size
                rows = await fetch_rows(conn, LEAVES, (size, END, PAGE))
                if not rows:
                    return self.frontier
                self.frontier, _ = self.frontier.extended(_hashes(size, rows[-1][0], rows))


def _hashes(size: int, last: int, rows: Sequence[tuple[int, str]]) -> list[bytes]:
    """The leaf hashes of seqs ``size + 1`` to ``last``, holes included."""
    if last - size == len(rows):  # no hole: the usual case
        return [leaf_hash(seq, event_id) for seq, event_id in rows]
    held = dict(rows)
    return [leaf_hash(seq, held.get(seq, HOLE_ID)) for seq in range(size + 1, last + 1)]


async def check_tree(
    conn: AsyncConnection, heads: list[SignedRoot], progress: Callable[[int, int], None] | None
) -> TreeReport:
    """The whole log, as it is now, checked against ``heads`` (store/merkle_check.py). The seqs no
    event holds are left out of the report: the chain check names each of them already
    (store/postgres/verify.py)."""
    size = int((await fetch_rows(conn, "SELECT coalesce(max(seq), 0) FROM events", ()))[0][0])
    check = TreeCheck(heads)
    done = holes = 0
    while done < size:
        rows = await fetch_rows(conn, LEAVES, (done, size, PAGE))
        last = size if len(rows) < PAGE else rows[-1][0]
        # (session and kind would name a replaced event; with no stored tree none is told apart)
        check.feed(done + 1, last, [LogLeaf(seq, event_id, "", "", False) for seq, event_id in rows], [])
        holes += last - done - len(rows)
        done = last
        if progress is not None:
            progress(done, size)
    report = check.finish()
    report.problems = [_named(p, heads) for p in report.problems if p.what != "missing"]
    report.problem_count -= holes
    return report


def _named(problem: Problem, heads: list[SignedRoot]) -> Problem:
    """A range that differs from a head, said as it is here: no stored tree was rewritten."""
    if problem.what != "signed":
        return problem
    head = next((h for h in heads if h.root.hex() == problem.id), None)
    if head is None:
        return problem
    detail = (
        f"seqs {problem.seq} to {head.size} are not what {head.name} covers: an event there was changed"
        " and re-sealed, or deleted and the events after it renumbered"
    )
    return replace(problem, detail=detail)
