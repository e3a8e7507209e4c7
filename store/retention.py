"""Retention: what pruning a session's old events leaves in their place, and what gc reports.

Pruning never breaks a chain. The events of a session older than a cut-off (the longest
prefix of the session, in seq order, whose events are all older) go, and one ``checkpoint``
event takes the seq of the last of them. Its payload says what it replaces:

- ``events``, ``first_seq``, ``last_seq``, ``first_ts``, ``last_ts``, ``kinds`` (a count per
  kind) and ``before``, the cut-off;
- ``head``: the id of the last event it replaces, which the session's next event names as its
  parent;
- ``replaces``: the blake3 of the ids of the events it replaces, in seq order, one per line.

The backend keeps a tombstone per pruned event (its id, seq and idempotency key), so that verify
finds the parents that were pruned and checks ``replaces`` against them, and so that an event
pruned away is still held: importing the same transcript again does not bring it back. A session
pruned a second time has its checkpoint replaced by a new one that covers both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from store.events import digest, format_ts

CHECKPOINT = "checkpoint"


def replaced_digest(ids: Iterable[str]) -> str:
    return digest("\n".join(ids).encode())


@dataclass(frozen=True, slots=True)
class Pruned:
    """What pruning one session removed (or, on a dry run, would remove)."""

    session: str
    events: int  # events of the log this prune takes away (an earlier checkpoint not counted)
    first_seq: int
    last_seq: int
    first_ts: int
    last_ts: int
    kinds: dict[str, int] = field(default_factory=dict)
    checkpoint: str | None = None  # the id of the checkpoint event; None on a dry run

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "events": self.events,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "first_ts": format_ts(self.first_ts),
            "last_ts": format_ts(self.last_ts),
            "kinds": self.kinds,
            "checkpoint": self.checkpoint,
        }


@dataclass(frozen=True, slots=True)
class Collected:
    """The payloads gc removed (or would remove): no event refers to them any more."""

    blobs: int
    bytes: int  # their size uncompressed
    stored_bytes: int  # their size as stored

    def to_json(self) -> dict[str, int]:
        return {"blobs": self.blobs, "bytes": self.bytes, "stored_bytes": self.stored_bytes}
