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
    heads: list[SignedHead]  # signed with ``key`` only
    untrusted: int  # lines met in the heads and witness files that are not heads signed with it


class HeadsReset(TypedDict):
    """`toka heads --reset --yes --json`: what the reset did."""

    time: str
    refused: str | None  # why signing was refused before it; null when it was not
    signed_before: int  # how many events the signed history reached
    kept_as: str | None  # where the heads file was moved; null when there was none
    head: SignedHead | None  # the head signed after it; null on an empty log


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
