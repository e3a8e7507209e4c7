"""The typed results of the signed tree heads (docs/tamper-evidence.md, docs/json.md)."""

from __future__ import annotations

from typing import TypedDict


class SignedHead(TypedDict):
    size: int
    root: str
    time: str
    key: str
    signature: str


class HeadsCheck(TypedDict):
    """The ``heads`` part of `toka verify --json`: the log against its signed heads."""

    heads: int
    valid: int
    matched: int
    covered: int
    unsigned: int
    latest: SignedHead | None


class HeadList(TypedDict):
    key: str | None
    heads: list[SignedHead]


class ProvedEvent(TypedDict):
    seq: int
    id: str
    session: str
    pruned: bool


class InclusionProof(TypedDict):
    """`toka proof EVENT --json`."""

    event: ProvedEvent
    leaf_index: int
    leaf_hash: str
    tree_size: int
    path: list[str]
    head: SignedHead


class ConsistencyProof(TypedDict):
    """`toka verify --since-head H --json`."""

    old: SignedHead
    new: SignedHead
    proof: list[str]
