"""What is sent: spans as toka builds them from the log, before any encoding, and their ids.

A session is a trace, an agent a span (the session's main agent the root), each model request
and each tool call a child span of its agent. Ids derive from the log's own, so that exporting
the same events again sends the same spans, which a collector keeps once:

- trace id: the first 16 bytes of blake3("toka.trace" 0 session);
- a request's or a tool call's span id: the first 8 bytes of its event's id (the ``usage``
  event; the ``tool.call`` event), itself a blake3 hash;
- an agent's span id: the first 8 bytes of blake3("toka.agent" 0 session 0 agent).

Attributes follow OpenTelemetry's GenAI semantic conventions as of semantic-conventions v1.41
(the last release that held them; the same names carry on in the GenAI conventions' own
repository): ``gen_ai.provider.name`` (and the older ``gen_ai.system`` beside it, which backends
built on v1.36 and before read), ``gen_ai.operation.name``, ``gen_ai.request.model``,
``gen_ai.usage.*``, ``gen_ai.tool.*``, ``gen_ai.agent.*``, ``gen_ai.conversation.id``. The
conventions have no cost attribute: ``gen_ai.usage.cost`` (USD) is the name OpenLIT and the
dashboards built on it read. What only toka knows is under ``toka.*``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from blake3 import blake3

# opentelemetry.proto.trace.v1.Span.SpanKind
INTERNAL = 1
CLIENT = 3

AttributeValue = str | bool | int | float


@dataclass(frozen=True, slots=True)
class SpanEvent:
    name: str
    time_ns: int
    attributes: dict[str, AttributeValue]


@dataclass(frozen=True, slots=True)
class Span:
    trace_id: bytes  # 16 bytes
    span_id: bytes  # 8 bytes
    parent_id: bytes  # 8 bytes; b"" for a trace's root
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, AttributeValue]
    events: tuple[SpanEvent, ...] = ()
    error: str | None = None  # the status message of a span that failed; None: unset (ok)

    def to_json(self) -> dict[str, Any]:
        """For tests and debugging: ids in hex, as OTLP's JSON mapping writes them."""
        return {
            "trace_id": self.trace_id.hex(),
            "span_id": self.span_id.hex(),
            "parent_id": self.parent_id.hex(),
            "name": self.name,
            "start_ns": self.start_ns,
            "end_ns": self.end_ns,
            "attributes": self.attributes,
            "events": [{"name": e.name, "time_ns": e.time_ns, "attributes": e.attributes} for e in self.events],
            "error": self.error,
        }


def _hashed(*parts: str, size: int) -> bytes:
    digest = blake3("\0".join(parts).encode()).digest()[:size]
    return digest if any(digest) else b"\x01" * size  # all zeros is OTLP's "no id"


def trace_id(session: str) -> bytes:
    return _hashed("toka.trace", session, size=16)


def event_span_id(event_id: str) -> bytes:
    raw = bytes.fromhex(event_id[:16])
    return raw if any(raw) else _hashed("toka.event", event_id, size=8)


def agent_span_id(session: str, agent: str) -> bytes:
    return _hashed("toka.agent", session, agent, size=8)


def ns(ts_us: int) -> int:
    """A log time (UTC microseconds) in OTLP's nanoseconds."""
    return ts_us * 1000
