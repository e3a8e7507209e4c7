"""The log's Merkle tree, as certificate transparency builds one (RFC 9162, section 2.1).

Leaf ``i`` is the event at seq ``i + 1`` (seqs are dense in every backend; a pruned event's
leaf is its tombstone, so pruning changes no leaf). Its hash is::

    leaf_hash = SHA-256(0x00 || seq as 8 bytes big-endian || the event id's 32 bytes)
    node_hash = SHA-256(0x01 || left || right)

and the root of ``n`` leaves splits them at the largest power of two below ``n``, as RFC 9162's
MTH does; the empty tree's root is SHA-256 of nothing. The 0x00 and 0x01 prefixes keep a leaf
from ever passing for a node. SHA-256, not the blake3 that names events: it is what RFC 9162
specifies and what every language's standard library has, so a third party checks a proof
with ``hashlib`` alone, and on these 65-byte inputs the two cost the same (the call dominates).

Storage follows Go's transparency log (golang.org/x/mod/sumdb/tlog): the hashes of the complete
subtrees, leaves included, in the order they become known, about two per leaf. Appending leaf
``n`` stores its hash and then the hash of each subtree it completes, so the right frontier of
the tree (the complete subtrees that the next leaf may join) is all an append needs: O(log n)
hashes. Any proof reads O(log n) stored hashes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

EMPTY_ROOT = hashlib.sha256(b"").digest()
HASH_BYTES = 32

# (level, index): the complete subtree of 2**level leaves starting at leaf index << level.
Node = tuple[int, int]
# Leaves lo..hi-1, as the proofs of RFC 9162 name their subtrees.
Span = tuple[int, int]


def leaf_hash(seq: int, event_id: str) -> bytes:
    return hashlib.sha256(b"\x00" + seq.to_bytes(8, "big") + bytes.fromhex(event_id)).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def stored_index(level: int, index: int) -> int:
    """Where the hash of node (``level``, ``index``) lies in the stored sequence."""
    # Level L's n-th hash comes right after level L-1's (2n+1)-th; level 0's n-th after
    # n + n/2 + n/4 + ... hashes (tlog's StoredHashIndex).
    for _ in range(level):
        index = 2 * index + 1
    position = 0
    while index > 0:
        position += index
        index >>= 1
    return position + level


def stored_count(size: int) -> int:
    """How many hashes a tree of ``size`` leaves stores."""
    return stored_index(0, size)


def frontier_nodes(size: int) -> list[Node]:
    """The complete subtrees a tree of ``size`` leaves ends with, largest first."""
    nodes = []
    start = 0
    for level in range(size.bit_length() - 1, -1, -1):
        if size >> level & 1:
            nodes.append((level, start >> level))
            start += 1 << level
    return nodes


def frontier_root(hashes: Sequence[bytes]) -> bytes:
    """The root of a tree from its right edge's hashes, largest subtree first."""
    if not hashes:
        return EMPTY_ROOT
    root = hashes[-1]
    for left in reversed(hashes[:-1]):
        root = node_hash(left, root)
    return root


@dataclass(frozen=True, slots=True)
class Frontier:
    """The tree's right edge: the size and the hashes of :func:`frontier_nodes`, largest first."""

    size: int
    hashes: tuple[bytes, ...]

    def root(self) -> bytes:
        return frontier_root(self.hashes)

    def extended(self, leaves: Iterable[bytes]) -> tuple[Frontier, list[bytes]]:
        """The frontier after ``leaves`` (leaf hashes), and the hashes they add to storage."""
        size, hashes = self.size, list(self.hashes)
        stored: list[bytes] = []
        for leaf in leaves:
            stored.append(leaf)
            node, carry = leaf, size
            while carry & 1:  # each trailing one bit of the old size is a subtree this leaf completes
                node = node_hash(hashes.pop(), node)
                stored.append(node)
                carry >>= 1
            hashes.append(node)
            size += 1
        return Frontier(size, tuple(hashes)), stored


EMPTY = Frontier(0, ())


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def span_nodes(lo: int, hi: int) -> list[Node]:
    """The complete subtrees whose hashes make up the hash of leaves lo..hi-1 (as RFC 9162 splits
    them, every span a proof names starts at a multiple of a power of two at least its size's)."""
    nodes = []
    while lo < hi:
        level = (hi - lo).bit_length() - 1
        while lo % (1 << level):
            level -= 1
        nodes.append((level, lo >> level))
        lo += 1 << level
    return nodes


def span_hash(lo: int, hi: int, node: Callable[[Node], bytes]) -> bytes:
    """MTH of leaves lo..hi-1 from the stored hashes ``node`` gives."""
    hashes = [node(n) for n in span_nodes(lo, hi)]
    root = hashes[-1]
    for left in reversed(hashes[:-1]):
        root = node_hash(left, root)
    return root


def inclusion_spans(index: int, size: int) -> list[Span]:
    """The subtrees whose hashes prove leaf ``index`` in a tree of ``size``, leaf end first
    (RFC 9162's PATH)."""
    spans: list[Span] = []
    lo, hi = 0, size
    while hi - lo > 1:
        k = _split(hi - lo)
        if index < lo + k:
            spans.append((lo + k, hi))
            hi = lo + k
        else:
            spans.append((lo, lo + k))
            lo += k
    return spans[::-1]


def consistency_spans(old: int, new: int) -> list[Span]:
    """The subtrees whose hashes prove the tree of ``old`` leaves a prefix of that of ``new``
    (RFC 9162's PROOF), in the proof's order; none when ``old`` is 0 or equal to ``new``."""
    if old == 0 or old >= new:
        return []
    spans: list[Span] = []
    lo, hi, m, whole = 0, new, old, True  # m: how many of the old leaves lie in lo..hi-1
    while m != hi - lo:
        k = _split(hi - lo)
        if m <= k:
            spans.append((lo + k, hi))
            hi = lo + k
        else:
            spans.append((lo, lo + k))
            lo += k
            m -= k
            whole = False
    if not whole:
        spans.append((lo, hi))
    return spans[::-1]


def verify_inclusion(index: int, size: int, leaf: bytes, path: list[bytes], root: bytes) -> bool:
    """RFC 9162 section 2.1.3.2: whether ``path`` proves ``leaf`` at ``index`` under ``root``."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(old: int, new: int, old_root: bytes, new_root: bytes, proof: list[bytes]) -> bool:
    """RFC 9162 section 2.1.4.2: whether ``proof`` shows the tree of ``old`` leaves with
    ``old_root`` to be a prefix of the tree of ``new`` leaves with ``new_root``."""
    if old > new:
        return False
    if old == new:
        return not proof and old_root == new_root
    if old == 0:
        return not proof and old_root == EMPTY_ROOT
    if not proof:
        return False
    if old & (old - 1) == 0:  # a power of two: the old root is a node of the new tree
        proof = [old_root, *proof]
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == old_root and sr == new_root


def tree_root(leaves: list[bytes]) -> bytes:
    """MTH of ``leaves`` computed directly, as RFC 9162 defines it (for tests and small trees)."""
    if not leaves:
        return EMPTY_ROOT
    if len(leaves) == 1:
        return leaves[0]
    k = _split(len(leaves))
    return node_hash(tree_root(leaves[:k]), tree_root(leaves[k:]))


@dataclass(frozen=True, slots=True)
class SignedRoot:
    """A signed head as the tree check needs it: its size and root, and how to name it."""

    size: int
    root: bytes
    name: str  # e.g. "the head signed at 2026-01-31T12:00:00.000000Z"


@dataclass(frozen=True, slots=True)
class LogLeaf:
    """What holds a seq of the log: an event, or the tombstone of one pruned away."""

    seq: int
    id: str
    session: str
    kind: str
    tombstone: bool
