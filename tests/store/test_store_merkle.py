"""The log's Merkle tree (store/merkle.py): RFC 9162's hashing and proofs, the tree the SQLite
backend stores with each append, and the check of a log against signed roots."""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from test_store_verify import OpenSqlite

from store.base import EventQuery
from store.events import NewEvent
from store.merkle import (
    EMPTY,
    EMPTY_ROOT,
    SignedRoot,
    consistency_spans,
    inclusion_spans,
    leaf_hash,
    span_hash,
    stored_index,
    tree_root,
    verify_consistency,
    verify_inclusion,
)
from store.sqlite.store import SqliteStore

# RFC 6962's test leaves and the roots of their first 1 to 8 (certificate transparency's own
# test vectors, carried into RFC 9162 unchanged).
VECTOR_LEAVES = [b"", b"\x00", b"\x10", b"\x20\x21", b"\x30\x31", b"\x40\x41\x42\x43", bytes(range(0x50, 0x58))]
VECTOR_LEAVES.append(bytes(range(0x60, 0x70)))
VECTOR_ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]


def test_roots_are_rfc_6962s_test_vectors() -> None:
    leaves = [hashlib.sha256(b"\x00" + data).digest() for data in VECTOR_LEAVES]
    frontier = EMPTY
    for size, expected in enumerate(VECTOR_ROOTS, 1):
        frontier, _ = frontier.extended([leaves[size - 1]])
        assert tree_root(leaves[:size]).hex() == expected
        assert frontier.root().hex() == expected
    assert EMPTY.root() == EMPTY_ROOT == hashlib.sha256(b"").digest()


def _grown(count: int) -> tuple[list[bytes], list[bytes]]:
    """``count`` leaves and the hashes a tree of them stores, appended a leaf at a time."""
    leaves = [leaf_hash(n + 1, hashlib.sha256(str(n).encode()).hexdigest()) for n in range(count)]
    frontier, stored = EMPTY, []
    for leaf in leaves:
        frontier, added = frontier.extended([leaf])
        stored += added
    return leaves, stored


def test_every_proof_of_every_tree_up_to_40_leaves_verifies_and_a_wrong_one_does_not() -> None:
    leaves, stored = _grown(40)

    def node(n: tuple[int, int]) -> bytes:
        return stored[stored_index(*n)]

    for size in range(1, 41):
        root = tree_root(leaves[:size])
        assert span_hash(0, size, node) == root
        for index in range(size):
            path = [span_hash(lo, hi, node) for lo, hi in inclusion_spans(index, size)]
            assert verify_inclusion(index, size, leaves[index], path, root)
            if size > 1:
                assert not verify_inclusion(index, size, leaves[(index + 1) % size], path, root)
        for old in range(size + 1):
            proof = [span_hash(lo, hi, node) for lo, hi in consistency_spans(old, size)]
            assert verify_consistency(old, size, tree_root(leaves[:old]), root, proof)
            if 1 < old < size:
                assert not verify_consistency(old, size, tree_root(leaves[1 : old + 1]), root, proof)


def test_a_tree_grown_in_batches_stores_what_one_grown_a_leaf_at_a_time_does() -> None:
    leaves, stored = _grown(37)
    frontier, batched = EMPTY, []
    for first in range(0, 37, 5):
        frontier, added = frontier.extended(leaves[first : first + 5])
        batched += added

    assert batched == stored
    assert frontier.root() == tree_root(leaves)


def _log_root(db_path: Path) -> bytes:
    """The root of the log's leaves, from the file: each seq's tombstone, else its event."""
    with closing(sqlite3.connect(db_path)) as db:
        held = dict(db.execute("SELECT seq, id FROM events"))
        held.update(db.execute("SELECT seq, id FROM pruned WHERE kind != 'checkpoint'"))
    return tree_root([leaf_hash(seq, held[seq]) for seq in sorted(held)])


async def _write(store: SqliteStore, batches: int) -> None:
    for n in range(batches):
        await store.append(
            [NewEvent(f"s{(n + i) % 3}", "message", {"n": n, "i": i}, ts=n * 10 + i) for i in range(n % 4 + 1)]
        )


async def test_each_append_grows_the_stored_tree_to_the_root_of_the_log(db_path: Path, open_sqlite: OpenSqlite) -> None:
    async with open_sqlite(db_path) as store:
        await _write(store, 12)
        frontier = await store.tree()

    assert frontier is not None and frontier.size == len(await _events(db_path, open_sqlite))
    assert frontier.root() == _log_root(db_path)


async def _events(db_path: Path, open_sqlite: OpenSqlite) -> list[object]:
    async with open_sqlite(db_path) as store:
        return list(await store.query(EventQuery()))


async def test_pruning_changes_no_leaf_so_old_heads_still_hold(db_path: Path, open_sqlite: OpenSqlite) -> None:
    async with open_sqlite(db_path) as store:
        await _write(store, 10)
        before = await store.tree()
        assert before is not None
        head = SignedRoot(before.size, before.root(), "the head")
        assert (await store.prune("s1", before=50)) is not None
        assert (await store.prune("s1", before=80)) is not None  # pruned twice: one checkpoint folds the other
        report = await store.check_tree([head])

    assert report is not None and report.problem_count == 0 and report.matched == 1
    assert _log_root(db_path) == before.root()


async def test_a_log_written_with_the_tree_off_gets_it_when_it_opens_with_it_on(
    db_path: Path, open_sqlite: OpenSqlite
) -> None:
    async with open_sqlite(db_path) as store:
        await _write(store, 4)
    async with open_sqlite(db_path, merkle=False) as store:
        await _write(store, 6)
        assert await store.tree() is None
    async with open_sqlite(db_path) as store:
        frontier = await store.tree()

    assert frontier is not None and frontier.root() == _log_root(db_path)


@pytest.mark.parametrize("seq", [1, 7, 15])
async def test_a_replaced_event_is_named_by_seq_and_session(db_path: Path, open_sqlite: OpenSqlite, seq: int) -> None:
    async with open_sqlite(db_path) as store:
        await _write(store, 8)
        frontier = await store.tree()
    assert frontier is not None
    with closing(sqlite3.connect(db_path)) as db, db:
        session = db.execute("SELECT session FROM events WHERE seq = ?", (seq,)).fetchone()[0]
        db.execute("UPDATE events SET id = ? WHERE seq = ?", ("ab" * 32, seq))

    async with open_sqlite(db_path) as store:
        report = await store.check_tree([SignedRoot(frontier.size, frontier.root(), "the head")])

    assert report is not None and report.matched == 0
    assert [(p.seq, p.session, p.what) for p in report.problems] == [(seq, session, "replaced")]
