"""What an append means, decided once for every backend: :class:`Sealer` chains a batch of new
events onto their sessions' heads (or the parents they name), returns the event already holding
an idempotency key or id instead of writing it again, and hashes each header. It takes the
backend's lookups as plain callables, so SQLite runs it inside one call on its connection thread
and PostgreSQL with what it read ahead in the append's transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from store.base import AppendResult
from store.errors import InvalidEvent
from store.events import Event, NewEvent, canonical_json, digest, header_id, now_us


@dataclass(slots=True)
class SealedEvent:
    """An event ready to write: the backend stores ``payload_bytes`` under ``event.digest``."""

    event: Event
    payload_bytes: bytes


class Sealer:
    """Turns a batch of new events into sealed ones, in order, against the current log.

    ``head_of(session)`` gives the id of a session's last event, ``by_key(session, key)`` and
    ``by_id(id)`` the committed event holding that key or id (or None). Events sealed earlier in
    the same batch are seen by later ones.
    """

    def __init__(
        self,
        next_seq: int,
        head_of: Callable[[str], str | None],
        by_key: Callable[[str, str], Event | None],
        by_id: Callable[[str], Event | None],
    ) -> None:
        self.next_seq = next_seq
        self._head_of = head_of
        self._by_key = by_key
        self._by_id = by_id
        self._heads: dict[str, str | None] = {}
        self._keys: dict[tuple[str, str], Event] = {}
        self._ids: dict[str, Event] = {}
        self.sealed: list[SealedEvent] = []

    def head(self, session: str) -> str | None:
        if session not in self._heads:
            self._heads[session] = self._head_of(session)
        return self._heads[session]

    def seal(self, new: NewEvent) -> AppendResult:
        if new.key is not None:
            held = self._keys.get((new.session, new.key)) or self._by_key(new.session, new.key)
            if held is not None:
                return AppendResult(held, False)
        if new.parents is None:
            head = self.head(new.session)
            parents: tuple[str, ...] = (head,) if head else ()
        else:
            parents = new.parents
        ts = new.ts if new.ts is not None else now_us()
        try:
            payload_bytes = canonical_json(new.payload)
        except (TypeError, ValueError) as exc:
            # Bad input, not a bug: as InvalidEvent the daemon fails only this request, not
            # every append committed in the same group (json.loads lets NaN in, for one).
            raise InvalidEvent(
                f"the payload of a {new.kind} event in session {new.session!r} is not JSON ({exc})",
                "use JSON values only: no NaN or Infinity, sets, bytes or other objects",
            ) from None
        payload_digest = digest(payload_bytes)
        event_id = header_id(new.session, new.agent, new.kind, ts, parents, payload_digest, new.key)
        # An event chained onto the current head cannot exist yet; one with explicit parents
        # (an import of an export, say) may, and then appending it again changes nothing.
        if new.parents is not None or event_id in self._ids:
            held = self._ids.get(event_id) or self._by_id(event_id)
            if held is not None:
                return AppendResult(held, False)
        event = Event(
            self.next_seq,
            event_id,
            new.session,
            new.agent,
            new.kind,
            ts,
            parents,
            payload_digest,
            new.key,
            new.payload,
        )
        self.next_seq += 1
        self._heads[new.session] = event_id
        self._ids[event_id] = event
        if new.key is not None:
            self._keys[(new.session, new.key)] = event
        self.sealed.append(SealedEvent(event, payload_bytes))
        return AppendResult(event, True)

    def seal_all(self, batch: Iterable[NewEvent]) -> list[AppendResult]:
        return [self.seal(new) for new in batch]
