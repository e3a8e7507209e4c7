"""What a correct log is, checked once for every backend: :class:`ChainVerifier` reads the events
as they lie in a backend (:class:`StoredRow`), in seq order, and names each one whose payload,
id or parents do not hold, then compares the session table's heads with the events.

It takes the backend's lookups as plain callables, so that the SQLite backend runs it inside
one call on its connection thread and PostgreSQL with what it read ahead a chunk at a time.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from store.base import MAX_PROBLEMS, Problem, VerifyReport
from store.events import digest, header_id
from store.retention import CHECKPOINT, replaced_digest


@dataclass(slots=True)
class StoredRow:
    """An event as it lies in a backend, before anything is trusted: what verify reads."""

    seq: int
    id: str
    session: str
    agent: str | None
    kind: str
    ts: int
    parents: tuple[str, ...]
    digest: str
    key: str | None
    payload_bytes: bytes | None  # None when the stored payload cannot even be decoded
    payload_error: str | None = None


class ChainVerifier:
    """Checks rows in seq order: payload digest, event id, and that every parent came earlier.

    ``seq_of(id)`` finds a parent that is not simply the previous event of its session (pruned
    events included), and ``replaced(seq)`` gives the ids a checkpoint at ``seq`` replaced, as
    the backend's tombstones hold them (store/retention.py). A checkpoint without tombstones
    (imported from another log) is taken at its word: the event after it may name its ``head``.
    """

    def __init__(self, seq_of: Callable[[str], int | None], replaced: Callable[[int], list[str]] | None = None) -> None:
        self._seq_of = seq_of
        self._replaced = replaced
        self._last: dict[str, tuple[str, int]] = {}  # session -> (id, seq) of its last event
        self._heads: dict[str, str] = {}  # session -> the head its checkpoint replaced
        self.events = 0
        self.problems: list[Problem] = []
        self.problem_count = 0

    def _problem(self, row: StoredRow, what: str, detail: str) -> None:
        self.problem_count += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(row.seq, row.id, row.session, what, detail))  # type: ignore[arg-type]

    def check(self, row: StoredRow) -> None:
        self.events += 1
        if row.payload_bytes is None:
            self._problem(row, "payload", row.payload_error or "payload cannot be read")
        elif digest(row.payload_bytes) != row.digest:
            self._problem(row, "digest", "payload bytes do not hash to the recorded digest")
        expected = header_id(row.session, row.agent, row.kind, row.ts, row.parents, row.digest, row.key)
        if expected != row.id:
            self._problem(row, "id", "header fields do not hash to the event id")
        if row.kind == CHECKPOINT and row.payload_bytes is not None:
            self._check_checkpoint(row, row.payload_bytes)
        for parent in row.parents:
            last = self._last.get(row.session)
            if (last is not None and last[0] == parent) or self._heads.get(row.session) == parent:
                continue
            parent_seq = self._seq_of(parent)
            if parent_seq is None:
                self._problem(row, "chain", f"parent {parent[:12]} is not in the log")
            elif parent_seq >= row.seq:
                self._problem(row, "chain", f"parent {parent[:12]} comes after the event")
        self._last[row.session] = (row.id, row.seq)

    def _check_checkpoint(self, row: StoredRow, payload_bytes: bytes) -> None:
        try:
            payload = json.loads(payload_bytes)
            head, replaces = payload["head"], payload["replaces"]
        except (ValueError, TypeError, KeyError):
            self._problem(row, "payload", "a checkpoint without the head and digest of what it replaced")
            return
        self._heads[row.session] = head
        ids = self._replaced(row.seq) if self._replaced is not None else []
        if ids and (replaced_digest(ids) != replaces or ids[-1] != head):
            self._problem(row, "chain", "the events this checkpoint replaced are not the ones it names")

    def check_heads(self, heads: Iterable[tuple[str, str]]) -> None:
        """Compare the session table's heads (``heads``: its rows as (session, head)) with the last
        event of each session in the log, both ways: the events decide, the table is a projection
        that appends and `toka sessions` read."""
        listed = set()
        for session, head in heads:
            listed.add(session)
            last = self._last.get(session)
            if last is None or last[0] != head:
                seq = last[1] if last else 0
                row = StoredRow(seq, head, session, None, "", 0, (), "", None, b"")
                self._problem(row, "head", "the session's last event is missing from the log")
        for session, (event_id, seq) in sorted(self._last.items(), key=lambda item: item[1][1]):
            if session not in listed:
                row = StoredRow(seq, event_id, session, None, "", 0, (), "", None, b"")
                self._problem(row, "head", "the session table has no row for this session (`toka admin rebuild`)")

    def report(self, session: str | None) -> VerifyReport:
        return VerifyReport(session, self.events, tuple(self.problems), self.problem_count)
