"""The Merkle tree of the SQLite backend: stored with the log, grown by each append.

``merkle`` (migration m007) holds the tree's stored hashes (store/merkle.py) a run at a time:
each row is what one transaction added, starting at stored hash number ``start``, and ``size``
is the tree's size after it. An append adds one row in its own transaction, so the tree covers
exactly the committed log. The writer keeps the tree's frontier in memory (:class:`Tree`); it
reloads it from the table when the log is not the size it remembers.

A log with fewer leaves in its tree than seqs (a database from before the tree, or a daemon
run with ``store.signed_heads = false``) has the rest added from the log as it is then. A log with
more leaves in its tree than seqs lost events after they were appended: at its next append the tree is cut back to
the log before it grows again, and the signed heads still hold what it was (``toka verify``).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterator

from store.base import resolve_prefix
from store.errors import NotFound
from store.merkle import (
    HASH_BYTES,
    Frontier,
    LogLeaf,
    Node,
    SignedRoot,
    frontier_nodes,
    leaf_hash,
    stored_count,
    stored_index,
)
from store.merkle_check import HOLE_ID, TreeCheck, TreeReport
from store.retention import CHECKPOINT
from store.rows import hex_range

log = logging.getLogger("toka.store")

# Leaves read from the log per step when the tree catches up with it.
_PAGE = 5000


class Tree:
    """The committed tree's frontier, as the writer last saw it (None: read it from the table)."""

    def __init__(self) -> None:
        self.frontier: Frontier | None = None


def stored_size(db: sqlite3.Connection) -> int:
    row = db.execute("SELECT size FROM merkle ORDER BY start DESC LIMIT 1").fetchone()
    return row[0] if row else 0


def stored_hash(db: sqlite3.Connection, position: int) -> bytes:
    row = db.execute(
        "SELECT start, hashes FROM merkle WHERE start <= ? ORDER BY start DESC LIMIT 1", (position,)
    ).fetchone()
    offset = (position - row[0]) * HASH_BYTES if row else -1
    if row is None or offset + HASH_BYTES > len(row[1]):
        raise LookupError(f"stored hash {position} is missing from the tree")
    return bytes(row[1][offset : offset + HASH_BYTES])


def node_hashes(db: sqlite3.Connection, nodes: list[Node]) -> dict[Node, bytes]:
    return {node: stored_hash(db, stored_index(*node)) for node in nodes}


def read_frontier(db: sqlite3.Connection) -> Frontier:
    size = stored_size(db)
    nodes = frontier_nodes(size)
    hashes = node_hashes(db, nodes)
    return Frontier(size, tuple(hashes[node] for node in nodes))


def log_leaves(db: sqlite3.Connection, first: int, last: int) -> list[LogLeaf]:
    """What holds each seq from ``first`` to ``last``, in seq order: the tombstone of a pruned
    event (its checkpoint took the seq of the last one it replaced), else the event."""
    # A checkpoint pruned again has a tombstone at the seq it took, after that of the event it
    # took it from, which is the leaf there.
    pruned = db.execute(
        "SELECT seq, id, session, kind FROM pruned WHERE seq BETWEEN ? AND ? ORDER BY seq, kind = ?",
        (first, last, CHECKPOINT),
    ).fetchall()
    events = db.execute(
        "SELECT seq, id, session, kind FROM events WHERE seq BETWEEN ? AND ? ORDER BY seq", (first, last)
    ).fetchall()
    tombstones: dict[int, LogLeaf] = {}
    for row in pruned:
        tombstones.setdefault(row[0], LogLeaf(row[0], row[1], row[2], row[3], True))
    held = {row[0]: LogLeaf(row[0], row[1], row[2], row[3], False) for row in events}
    held.update(tombstones)
    return [held[seq] for seq in sorted(held)]


def last_seq(db: sqlite3.Connection) -> int:
    row = db.execute("SELECT max(seq) FROM (SELECT max(seq) AS seq FROM events UNION ALL SELECT max(seq) FROM pruned)")
    return row.fetchone()[0] or 0


def grow(db: sqlite3.Connection, tree: Tree, size: int, leaves: list[tuple[int, str]]) -> Frontier:
    """Inside the append's transaction: bring the tree to ``size`` (the log before the batch),
    add the batch's leaves (seq, id) and store what they add. Returns the frontier after them,
    which the caller keeps once the transaction has committed."""
    frontier = tree.frontier if tree.frontier is not None and tree.frontier.size == size else None
    if frontier is None:
        frontier = _fit(db, read_frontier(db), size)
    grown, stored = frontier.extended(leaf_hash(seq, event_id) for seq, event_id in leaves)
    if stored:
        db.execute(
            "INSERT INTO merkle (start, size, hashes) VALUES (?, ?, ?)",
            (stored_count(frontier.size), grown.size, b"".join(stored)),
        )
    return grown


def catch_up(db: sqlite3.Connection, tree: Tree, fit: bool = True) -> bool:
    """At open: the tree made as long as the log when it is shorter (in one transaction); with
    ``fit`` False (a damaged database takes no writes) read as it stands. False when the database
    has no tree table (a test standing in for an older toka)."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'merkle'").fetchone():
        return False
    size = last_seq(db)
    frontier = read_frontier(db)
    # A tree longer than the log stays as it is until the next append: what it holds names what
    # was deleted, for a verify run before then.
    if fit and frontier.size < size:
        db.execute("BEGIN IMMEDIATE")
        try:
            frontier = _fit(db, frontier, size)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    tree.frontier = frontier
    return True


def _fit(db: sqlite3.Connection, frontier: Frontier, size: int) -> Frontier:
    if frontier.size > size:
        log.warning(
            "the log ends at seq %d but its tree held %d leaves: events were deleted after they were"
            " appended; `toka verify` names them against the signed heads",
            size,
            frontier.size,
        )
        _cut(db, size)
        return read_frontier(db)
    while frontier.size < size:
        first, last = frontier.size + 1, min(size, frontier.size + _PAGE)
        held = {leaf.seq: leaf.id for leaf in log_leaves(db, first, last)}
        leaves = [leaf_hash(seq, held.get(seq, HOLE_ID)) for seq in range(first, last + 1)]
        grown, stored = frontier.extended(leaves)
        db.execute(
            "INSERT INTO merkle (start, size, hashes) VALUES (?, ?, ?)",
            (stored_count(frontier.size), grown.size, b"".join(stored)),
        )
        frontier = grown
    return frontier


def _cut(db: sqlite3.Connection, size: int) -> None:
    """The stored tree cut back to ``size`` leaves: its stored hashes are a prefix of any longer
    tree's, so this keeps the first ``stored_count(size)`` of them."""
    keep = stored_count(size)
    db.execute("DELETE FROM merkle WHERE start >= ?", (keep,))
    row = db.execute("SELECT start, hashes FROM merkle ORDER BY start DESC LIMIT 1").fetchone()
    if row is not None:
        db.execute(
            "UPDATE merkle SET size = ?, hashes = ? WHERE start = ?",
            (size, bytes(row[1][: (keep - row[0]) * HASH_BYTES]), row[0]),
        )


def stored_leaves(db: sqlite3.Connection, first: int, last: int) -> list[bytes]:
    """The stored leaf hashes of seqs ``first`` to ``last`` (fewer where the tree ends)."""
    return list(_leaf_run(db, first - 1, last))


def _leaf_run(db: sqlite3.Connection, index: int, end: int) -> Iterator[bytes]:
    """Leaf hashes of leaf indexes ``index`` up to ``end`` (exclusive), read a row at a time."""
    position = stored_index(0, index)
    rows = db.execute(
        "SELECT start, hashes FROM merkle WHERE start > (SELECT coalesce(max(start), 0) FROM merkle"
        " WHERE start <= ?) - 1 ORDER BY start",
        (position,),
    )
    for start, hashes in rows:
        while index < end:
            offset = (position - start) * HASH_BYTES
            if offset + HASH_BYTES > len(hashes):
                break
            yield bytes(hashes[offset : offset + HASH_BYTES])
            # Leaf n is followed by the parents it completes: one per trailing one bit of n.
            position += 1 + ((index ^ (index + 1)).bit_length() - 1)
            index += 1
        if index >= end:
            return


def check_tree(
    db: sqlite3.Connection, heads: list[SignedRoot], progress: Callable[[int, int], None] | None
) -> TreeReport:
    """The whole log checked against ``heads`` (store/merkle_check.py), in one read transaction
    so that the log and its stored tree are read as of one moment."""
    db.execute("BEGIN")
    try:
        size = last_seq(db)
        check = TreeCheck(heads)
        for first in range(1, size + 1, _PAGE):
            last = min(size, first + _PAGE - 1)
            check.feed(first, last, log_leaves(db, first, last), stored_leaves(db, first, last))
            if progress is not None:
                progress(last, size)
        return check.finish()
    finally:
        db.execute("COMMIT")


def find_leaf(db: sqlite3.Connection, event_id: str) -> LogLeaf:
    """The leaf of the event whose id is ``event_id`` or starts with it, pruned or not."""
    prefix = event_id.lower()
    found: dict[str, LogLeaf] = {}
    for table, tombstone in (("events", False), ("pruned", True)):
        sql = f"SELECT seq, id, session, kind FROM {table} WHERE "
        rows = db.execute(sql + "id = ?", (prefix,)).fetchall()
        if not rows and (span := hex_range(prefix)):
            rows = db.execute(sql + "id >= ? AND id < ? LIMIT 6", span).fetchall()
        found.update((row[1], LogLeaf(row[0], row[1], row[2], row[3], tombstone)) for row in rows)
    leaf = found[resolve_prefix(event_id, list(found), "event")]
    pruned = leaf.kind == CHECKPOINT and not leaf.tombstone
    if pruned and db.execute("SELECT 1 FROM pruned WHERE seq = ?", (leaf.seq,)).fetchone():
        raise NotFound(
            f"checkpoint {leaf.id[:12]} is not a leaf of the tree: the events it replaced are",
            "prove one of those by its id, or an event that came after it",
        )
    return leaf
