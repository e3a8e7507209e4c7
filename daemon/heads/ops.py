"""The ``heads.*`` operations (docs/protocol.md): the signed heads, an inclusion proof of an
event, and a consistency proof between two heads. Each proof is checked here, against the
signed root, before it is answered: a stored tree that does not hash to what was signed is an
integrity failure, not a proof."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from daemon.heads.check import gather
from daemon.heads.record import SignedHead, parse_head
from daemon.heads.service import Heads, holds
from daemon.rpc.registry import Call, Ops
from daemon.rpc.requests import NonEmpty
from store.errors import IntegrityError, NotFound, UsageError
from store.merkle import (
    SignedRoot,
    consistency_spans,
    inclusion_spans,
    leaf_hash,
    span_hash,
    span_nodes,
    verify_consistency,
    verify_inclusion,
)
from store.merkle_check import CheckedLog

OPS = Ops(Heads)


@dataclass(frozen=True, slots=True)
class ListHeads:
    limit: int | None = None


@OPS.op("heads.list", ListHeads)
async def heads_list(heads: Heads, request: ListHeads, call: Call) -> dict[str, Any]:
    """The newest heads signed with this log's key, checked from the newest back until ``limit``
    are found; ``untrusted`` counts the lines met on the way that are not such heads."""
    if request.limit is not None and request.limit < 1:
        raise UsageError("argument 'limit' must be at least 1")
    found, problems = gather(heads.core)
    public = heads.key.public if heads.key is not None else b""
    good: list[SignedHead] = []
    untrusted = sum(1 for p in problems if p.what == "signed")  # lines that are not heads at all
    for head in reversed(found):
        if request.limit is not None and len(good) >= request.limit:
            break
        if holds(head, public):
            good.append(head)
        else:
            untrusted += 1
    key = None if heads.key is None else public.hex()
    return {"key": key, "heads": [h.to_json() for h in reversed(good)], "untrusted": untrusted}


async def _hashes(heads: Heads, spans: list[tuple[int, int]]) -> list[bytes]:
    """The hash of each span, from the stored tree."""
    nodes = sorted({node for lo, hi in spans for node in span_nodes(lo, hi)})
    try:
        stored = await heads.core.store.tree_nodes(nodes)
    except LookupError as exc:
        raise IntegrityError(f"the tree stored with the log is damaged: {exc}", "run `toka verify`") from None
    return [span_hash(lo, hi, stored.__getitem__) for lo, hi in spans]


@dataclass(frozen=True, slots=True)
class Proof:
    event: NonEmpty


@OPS.op("heads.proof", Proof)
async def heads_proof(heads: Heads, request: Proof, call: Call) -> dict[str, Any]:
    leaf = await heads.core.store.tree_leaf(request.event)
    head = await heads.covering(leaf.seq)
    index, value = leaf.seq - 1, leaf_hash(leaf.seq, leaf.id)
    path = await _hashes(heads, inclusion_spans(index, head.size))
    if not verify_inclusion(index, head.size, value, path, bytes.fromhex(head.root)):
        raise IntegrityError(
            f"event {leaf.id[:12]} (seq {leaf.seq}) is not in the tree {head.name} covers",
            "run `toka verify`: the log or its stored tree changed after the head was signed",
        )
    return {
        "event": {"seq": leaf.seq, "id": leaf.id, "session": leaf.session, "pruned": leaf.tombstone},
        "leaf_index": index,
        "leaf_hash": value.hex(),
        "tree_size": head.size,
        "path": [p.hex() for p in path],
        "head": head.to_json(),
    }


@dataclass(frozen=True, slots=True)
class Consistency:
    since: Any  # a size, a root (or its prefix), or a head as JSON


def _old_head(known: list[SignedHead], since: Any) -> SignedHead:
    """The head ``since`` names among the known ones, or the head it is."""
    if isinstance(since, dict):
        head = parse_head(since)
        if head is None:
            raise UsageError("'since' is not a signed head", "give size, root, time, key and signature")
        return head
    if isinstance(since, int) and not isinstance(since, bool):
        found = [h for h in known if h.size == since]
    elif isinstance(since, str) and since:
        found = [h for h in known if h.root.startswith(since.lower())]
    else:
        raise UsageError("argument 'since' must be a head's size, its root (or a prefix), or the head as JSON")
    roots = {h.root for h in found}
    if not found:
        raise NotFound(f"no signed head matches {since!r}", "list them with `toka heads`")
    if len(roots) > 1:
        raise IntegrityError(
            f"signed heads disagree about {since!r}: {len(roots)} different roots", "run `toka verify`"
        )
    return found[0]


@OPS.op("heads.consistency", Consistency)
async def heads_consistency(heads: Heads, request: Consistency, call: Call) -> dict[str, Any]:
    """The old head checked against the log's events, not only the tree stored with them: the
    leaves it covers are rebuilt from the events (store/merkle_check.py) and must hash to its
    root, and to the latest head's."""
    public = heads.key.public if heads.key is not None else b""
    found, _ = gather(heads.core)
    old = _old_head([h for h in found if holds(h, public)], request.since)
    if old.key != public.hex():
        raise IntegrityError(
            f"{old.name} is signed by key {old.key[:16]}, not this log's heads.key ({public.hex()[:16]})",
            "a head proves a log only with the key that signs it: `toka heads --json` shows this log's",
        )
    if not holds(old, public):
        raise IntegrityError(
            f"{old.name} does not carry a good signature by this log's key", "it was altered or forged"
        )
    new = await heads.covering(0)
    if old.size > new.size:
        raise IntegrityError(f"{old.name} covers more events than the latest head ({new.size})", "run `toka verify`")
    await _rebuilt_from_events(heads, old, new)
    proof = await _hashes(heads, consistency_spans(old.size, new.size))
    if not verify_consistency(old.size, new.size, bytes.fromhex(old.root), bytes.fromhex(new.root), proof):
        raise IntegrityError(
            f"the log of {new.name} does not extend {old.name}: events it covered were changed",
            "run `toka verify` to name them",
        )
    return {"old": old.to_json(), "new": new.to_json(), "proof": [p.hex() for p in proof]}


async def _rebuilt_from_events(heads: Heads, old: SignedHead, new: SignedHead) -> None:
    """Raises unless the log's events hash to both heads' roots."""
    store = heads.core.store
    wanted = [SignedRoot(h.size, bytes.fromhex(h.root), h.name) for h in {old, new}]
    report = await store.check_tree(wanted) if isinstance(store, CheckedLog) else None
    if report is None:
        raise UsageError("this log keeps no tree", "set store.signed_heads = true")
    for head in sorted({old, new}, key=lambda h: h.size):
        if not any(h.size == head.size and h.root.hex() == head.root for h in report.held):
            first = next((p for p in report.problems if p.seq <= head.size), None)
            where = "" if first is None else f": the first at seq {first.seq}, {first.what} ({first.detail})"
            raise IntegrityError(
                f"the log's events no longer hash to {head.name}, so the log does not extend {old.name}{where}",
                "run `toka verify` to name every change",
            )


@dataclass(frozen=True, slots=True)
class ResetHeads:
    confirm: bool = False


@OPS.op("heads.reset", ResetHeads)
async def heads_reset(heads: Heads, request: ResetHeads, call: Call) -> dict[str, Any]:
    if not request.confirm:
        raise UsageError(
            "a reset starts the signed history afresh and takes 'confirm': true",
            "`toka verify` first: it says what a reset would stop reporting",
        )
    return await heads.reset()
