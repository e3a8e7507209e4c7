"""The log checked against the tree heads it was signed at (docs/tamper-evidence.md).

The chain check (store/base.py) finds an event whose bytes no longer hash to its id. What it
cannot find is a change made consistently: an event deleted with every trace of it, a session's
tail cut off and its projection rebuilt, a run of events swapped for a made-up checkpoint, a
session edited and re-sealed from one event onward. Each of those changes a leaf of the Merkle
tree (store/merkle.py), or leaves a seq with no leaf, so no signed root taken before it still
matches.

:class:`TreeCheck` rebuilds the tree from the log, one leaf per seq (an event, or the tombstone
of a pruned one), and compares its root with each signed head at that head's size. To name the
events, it also reads the leaf hashes stored with the log as each append wrote them: where those
still hash to a signed root they are what was signed, and every leaf of the log that differs
from them is a replaced event, named by seq and session. Where the stored tree was rewritten
too, the damage is named as the range of seqs between the last head that holds and the first
that does not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from store.base import MAX_PROBLEMS, Problem
from store.merkle import LogLeaf, SignedRoot, frontier_root, node_hash
from store.merkle import leaf_hash as _leaf_hash
from store.retention import CHECKPOINT

# The id that stands for a seq nothing holds, in the rebuilt tree and in a tree caught up with a
# log that had lost events already: no header hashes to it.
HOLE_ID = "00" * 32


class _Builder:
    """A Merkle tree's right frontier, grown one leaf at a time (store/merkle.py's Frontier,
    mutable: the check pushes a million leaves)."""

    __slots__ = ("size", "hashes")

    def __init__(self, size: int = 0, hashes: list[bytes] | None = None) -> None:
        self.size = size
        self.hashes = hashes or []

    def push(self, leaf: bytes) -> None:
        hashes, node, carry = self.hashes, leaf, self.size
        while carry & 1:
            node = node_hash(hashes.pop(), node)
            carry >>= 1
        hashes.append(node)
        self.size += 1

    def root(self) -> bytes:
        return frontier_root(self.hashes)

    def copy(self) -> _Builder:
        return _Builder(self.size, list(self.hashes))


@dataclass(slots=True)
class TreeReport:
    """What the tree check found: how far the log is covered by a head that still holds."""

    size: int = 0  # leaves the log holds (its last seq)
    heads: int = 0  # signed heads checked
    matched: int = 0  # of which the log still matches
    covered: int = 0  # the largest size of a head the log matches
    problems: list[Problem] = field(default_factory=list)
    problem_count: int = 0
    held: list[SignedRoot] = field(default_factory=list)  # the heads the log matches


@runtime_checkable
class CheckedLog(Protocol):
    """A backend that can check its whole log against signed roots (SQLite's, store/sqlite/store.py)."""

    async def check_tree(
        self, heads: Sequence[SignedRoot], progress: Callable[[int, int], None] | None = None
    ) -> TreeReport | None: ...


class TreeCheck:
    """Feed it the log's leaves in seq order, a range of seqs at a time, with the stored tree's
    leaf hashes for the same seqs; :meth:`finish` says what does not match the signed heads."""

    def __init__(self, heads: Sequence[SignedRoot]) -> None:
        self._heads = sorted(heads, key=lambda h: h.size)
        self._next_head = 0
        self._log = _Builder()
        self._stored: _Builder | None = None  # forked from the log's tree where they first differ
        self._stored_ends = False  # the stored tree is shorter than the log
        self._seq = 0  # the last seq fed
        self._last_held = 0  # the last seq an event or tombstone held
        self._results: list[tuple[SignedRoot, bool, bool | None]] = []  # head, log matches, stored matches
        self._missing: list[int] = []
        self._differing: list[tuple[LogLeaf, bytes]] = []  # leaves unlike the stored tree's

    def feed(self, first: int, last: int, leaves: Sequence[LogLeaf], stored: Sequence[bytes]) -> None:
        """Seqs ``first`` to ``last``: the leaves that hold some of them, in seq order, and the
        stored leaf hashes of seqs ``first``, ``first + 1``, ... (fewer where the tree ends)."""
        assert first == self._seq + 1
        held = iter(leaves)
        leaf = next(held, None)
        for seq in range(first, last + 1):
            offset = seq - first
            kept = stored[offset] if offset < len(stored) else None
            if leaf is not None and leaf.seq == seq:
                value = _leaf_hash(seq, leaf.id)
                if kept is not None and kept != value:
                    self._differing.append((leaf, kept))
                self._last_held = seq
                current = leaf
                leaf = next(held, None)
            else:
                value = _leaf_hash(seq, HOLE_ID)
                current = None
                self._missing.append(seq)
            self._push(value, kept, current)
        self._seq = last

    def _push(self, value: bytes, kept: bytes | None, leaf: LogLeaf | None) -> None:
        if kept is None:
            self._stored_ends = True
        elif self._stored is None and kept != value:
            self._stored = self._log.copy()
        if self._stored is not None and not self._stored_ends:
            self._stored.push(kept)  # type: ignore[arg-type]
        self._log.push(value)
        while self._next_head < len(self._heads) and self._heads[self._next_head].size == self._log.size:
            head = self._heads[self._next_head]
            log_root = self._log.root()
            if self._stored_ends:
                stored_matches = None
            else:
                stored_matches = (self._stored.root() if self._stored is not None else log_root) == head.root
            self._results.append((head, log_root == head.root, stored_matches))
            self._next_head += 1

    def finish(self) -> TreeReport:
        report = TreeReport(size=self._last_held, heads=len(self._heads))
        # Heads past the end of the log: it was cut short after they were signed.
        beyond = self._heads[self._next_head :]
        for head in beyond:
            self._results.append((head, False, None))
        report.held = [h for h, matches, _ in self._results if matches]
        report.matched = len(report.held)
        report.covered = max((h.size for h, matches, _ in self._results if matches), default=0)
        trusted = max((h.size for h, _, stored in self._results if stored), default=0)
        named: list[int] = []

        def add(problem: Problem) -> None:
            report.problem_count += 1
            named.append(problem.seq)
            if len(report.problems) < MAX_PROBLEMS:
                report.problems.append(problem)

        signed_size = self._heads[-1].size if self._heads else 0
        if beyond:
            head = beyond[-1]
            add(
                Problem(
                    self._last_held + 1,
                    head.root.hex(),
                    "",
                    "truncated",
                    f"the log ends at seq {self._last_held}, but {head.name} covers {head.size} events:"
                    f" seqs {self._last_held + 1} to {head.size} are gone",
                )
            )
        for seq in self._missing:
            if seq <= self._last_held:
                covered_by = "a signed head covers it" if seq <= signed_size else "seqs are dense"
                add(Problem(seq, "", "", "missing", f"no event or tombstone holds seq {seq} ({covered_by})"))
        for leaf, _ in self._differing:
            add(Problem(leaf.seq, leaf.id, leaf.session, "replaced", _replaced_detail(leaf, leaf.seq <= trusted)))
        first_failed = next((i for i, (_, matches, _) in enumerate(self._results) if not matches), None)
        if first_failed is not None:
            head = self._results[first_failed][0]
            since = max((h.size for h, matches, _ in self._results[:first_failed] if matches), default=0)
            if not any(since < seq <= head.size for seq in named):
                add(
                    Problem(
                        since + 1,
                        head.root.hex(),
                        "",
                        "signed",
                        f"seqs {since + 1} to {head.size} are not what {head.name} covers"
                        " (the tree stored with the log was rewritten too, so the events cannot be told apart)",
                    )
                )
        report.problems.sort(key=lambda p: p.seq)
        return report


def _replaced_detail(leaf: LogLeaf, signed: bool) -> str:
    what = "a checkpoint with no tombstones" if leaf.kind == CHECKPOINT and not leaf.tombstone else "the event"
    if signed:
        return f"{what} at seq {leaf.seq} is not the one a signed head covers: it was replaced or re-sealed"
    return f"{what} at seq {leaf.seq} differs from the tree stored with the log"
