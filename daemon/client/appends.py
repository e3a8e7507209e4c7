"""Appending events made from user data through the client: `toka import`, `toka watch`,
`toka record`.

The daemon reads each request as one line and refuses, whole, a line longer than its
``daemon.max_line_bytes`` (4 MiB unless configured; ``hello`` says how many). So events go in
requests cut by their encoded size as well as their count (daemon/batching.py): each event is
encoded once, a request is closed before its line would pass the limit less LINE_HEADROOM (the
request around the events), and its line is written from the encoded events.

An event too large for a request even alone is stored truncated rather than refused with its
neighbours (:func:`prepare`): its longest strings are cut, each ending in "…", until it fits,
and its payload gains ``toka_truncated``: ``{"bytes", "digest", "limit"}``, the size and the
blake3 digest of the whole payload's canonical JSON (the digest the store would have given it)
and the limit it met. It keeps its key, so importing the file again does not add it twice. The
caller reports it, naming the file and the record. The daemon's own ingestion (the hook spool,
the ``[watch] paths`` watcher) runs in the daemon, has no line to fit, and stores such records
whole.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from daemon.batching import Batcher
from store.errors import TokaError

if TYPE_CHECKING:
    from daemon.client.sync import Client

# Bytes of a request line left for what surrounds its events: {"id":..,"op":"events.append",
# "args":{"events":[...]}} and a newline take about 60.
LINE_HEADROOM = 1024
# Append requests sent and not yet answered when the next is sent. The daemon decodes the next
# request while one commits. More would deadlock this client, which reads no answer while it
# sends: past what the socket holds (a request is up to 4 MiB, an answer ~100 KB), the daemon
# would block writing answers not read while this process blocks sending a request not read.
REQUESTS_IN_FLIGHT = 1
# The payload field a truncated event carries.
TRUNCATED = "toka_truncated"
CUT = "…"


@dataclass(frozen=True)
class Truncation:
    """How an event too large for a request was cut."""

    key: str | None
    kind: str
    bytes: int  # of the whole payload's canonical JSON
    digest: str  # its blake3, as the store digests payloads
    limit: int  # the daemon's max_line_bytes

    def reason(self) -> str:
        record = f"record {self.key}" if self.key else f"the {self.kind} record"
        return (
            f"{record} is {_mib(self.bytes)} of payload, more than one request may carry"
            f" (daemon.max_line_bytes, {_mib(self.limit)}): stored truncated, with the blake3 digest"
            f" {self.digest[:16]}… of the whole; raise daemon.max_line_bytes to keep such records whole"
        )


@dataclass(slots=True)  # one per event: not frozen, whose __init__ costs a setattr call per field
class Prepared:
    """An event as it goes into a request: as it will be stored, its JSON, and how it was cut."""

    event: dict[str, Any]
    line: bytes
    truncation: Truncation | None = None


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


# One encoder for every event: json.dumps with options builds a new one on each call.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def _encode(event: dict[str, Any]) -> bytes:
    return _ENCODER.encode(event).encode("utf-8")


def prepare(event: dict[str, Any], limit: int) -> Prepared:
    """``event`` ready for a request line of at most ``limit`` bytes: as it is, or truncated."""
    line = _encode(event)
    budget = limit - LINE_HEADROOM
    if len(line) <= budget:
        return Prepared(event, line)
    return _truncated(event, budget, limit)


def _truncated(event: dict[str, Any], budget: int, limit: int) -> Prepared:
    from store.events import canonical_json, digest  # blake3: loaded only when an event is cut

    payload = event.get("payload")
    if not isinstance(payload, dict):
        raise TokaError(f"an event of {len(_encode(event))} bytes whose payload is not an object cannot be cut")
    whole = canonical_json(payload)
    truncation = Truncation(event.get("key"), str(event.get("kind")), len(whole), digest(whole), limit)
    mark = {"bytes": truncation.bytes, "digest": truncation.digest, "limit": limit}

    def cut_to(chars: int) -> tuple[dict[str, Any], bytes]:
        cut = {**event, "payload": {**_cut(payload, chars), TRUNCATED: mark}}
        return cut, _encode(cut)

    # The longest cut of every string that fits, found by bisection: each try encodes at most
    # about as much as one request holds.
    low, high = 0, min(_longest(payload), budget)
    best = None
    while low <= high:
        chars = (low + high) // 2
        cut, line = cut_to(chars)
        if len(line) <= budget:
            best, low = (cut, line), chars + 1
        else:
            high = chars - 1
    if best is None:  # not its strings but its shape is too large: keep the start of its JSON
        preview = whole.decode("utf-8")[: budget // 8]  # an escaped character takes at most 6 bytes
        cut = {**event, "payload": {TRUNCATED: mark, "preview": preview + CUT}}
        best = cut, _encode(cut)
    return Prepared(best[0], best[1], truncation)


def _cut(value: Any, chars: int) -> Any:
    if isinstance(value, str):
        return value if len(value) <= chars else value[:chars] + CUT
    if isinstance(value, dict):
        return {key: _cut(item, chars) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut(item, chars) for item in value]
    return value


def _longest(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return max((_longest(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return max((_longest(item) for item in value), default=0)
    return 0


Answered = Callable[[list[Prepared], list[dict[str, Any]]], None]


class Appends:
    """Events appended through ``client`` in requests that fit its daemon's line, with
    REQUESTS_IN_FLIGHT request sent and not yet answered when the next is sent: the daemon
    commits one while it decodes the next and this process prepares the one after, instead of
    the three waiting on each other. ``answered(events, results)`` is called with each answer.

    ``source`` (a file, say) names the events added while it is set in the errors of their
    requests; a request holds the events of one source when :meth:`flush` is called before the
    source changes.
    """

    def __init__(self, client: Client, answered: Answered) -> None:
        self._client = client
        self.limit = client.line_bytes
        self._batcher: Batcher[Prepared] = Batcher(self.limit - LINE_HEADROOM)
        self._answered = answered
        self._in_flight: deque[tuple[int, list[Prepared], str | None]] = deque()
        self.source: str | None = None
        self.requests = 0  # sent so far

    def add(self, event: dict[str, Any]) -> Prepared:
        """Add ``event`` to the next request (sending the one it closed); as it will be stored."""
        prepared = prepare(event, self.limit)
        full = self._batcher.add(prepared, len(prepared.line) + 1)  # and a comma
        if full:
            self._send(full)
        return prepared

    def flush(self) -> None:
        """Send the request being filled, if it holds anything."""
        if batch := self._batcher.take():
            self._send(batch)

    def settle(self) -> None:
        """Wait for the answers of the requests in flight, if any (raising the first error)."""
        while self._in_flight:
            self._settle_oldest()

    def _settle_oldest(self) -> None:
        request_id, batch, source = self._in_flight.popleft()
        try:
            results: list[dict[str, Any]] = self._client.result(request_id)["events"]
        except TokaError as exc:
            if source is None:
                raise
            raise type(exc)(f"{source}: {exc.message}", exc.hint) from None
        self._answered(batch, results)

    def _send(self, batch: list[Prepared]) -> None:
        request_id = self._client.submit_encoded("events.append", "events", [p.line for p in batch])
        self.requests += 1
        self._in_flight.append((request_id, batch, self.source))
        if len(self._in_flight) > REQUESTS_IN_FLIGHT:
            self._settle_oldest()


def append_all(client: Client, events: Iterable[dict[str, Any]]) -> list[tuple[Prepared, dict[str, Any]]]:
    """Append every event in as few requests as fit; each as stored, with its result, in order."""
    done: list[tuple[Prepared, dict[str, Any]]] = []
    appends = Appends(client, lambda batch, results: done.extend(zip(batch, results, strict=True)))
    for event in events:
        appends.add(event)
    appends.flush()
    appends.settle()
    return done
