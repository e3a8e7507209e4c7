"""The receiving component: decoded OTLP requests mapped to events (:meth:`Receiver.map`, which
touches nothing of the daemon's state, so that it runs on the decoding thread) and appended
through the group committer, so that a request is answered only once its events committed; and
the counts ``status`` shows. It knows nothing of HTTP (daemon/otel/http.py serves it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from daemon.batching import MAX_BATCH_EVENTS
from daemon.core import Core
from daemon.otel.events import Mapped, Rules, log_events, metric_events
from daemon.otel.model import Decoded
from daemon.otel.settings import OtelSettings
from daemon.redact.settings import RedactionSettings


@dataclass(frozen=True, slots=True)
class Receipt:
    """What a request's answer says: items not accepted, and why."""

    rejected: int = 0
    message: str = ""


class Receiver:
    def __init__(self, core: Core) -> None:
        self.core = core
        settings = core.settings
        self.rules = Rules(settings[RedactionSettings].kinds, settings[OtelSettings].max_output_bytes)
        self.requests = 0
        self.refused = 0  # requests answered with an error
        self.counts = {"log_records": 0, "metric_points": 0, "spans": 0, "events": 0, "rejected": 0, "ignored": 0}

    def map(self, signal: str, decoded: Decoded) -> Mapped:
        """The events of a request, and what was left out of it."""
        if signal == "logs":
            return log_events(decoded.logs, self.rules)
        if signal == "metrics":
            return metric_events(decoded.points)
        return Mapped(ignored=decoded.spans)  # accepted, so that exporters do not retry, and not kept

    async def receive(self, signal: str, decoded: Decoded, mapped: Mapped | None = None) -> Receipt:
        """Append the events of ``decoded`` (mapped already, or now); returns once they committed
        (an append's error goes up)."""
        if mapped is None:
            mapped = self.map(signal, decoded)
        self.counts["log_records"] += len(decoded.logs)
        self.counts["metric_points"] += len(decoded.points)
        self.counts["spans"] += decoded.spans
        # In batches, each committed before the next is handed over: a request of many events
        # then never holds the loop for long after its commit (each batch's events are handed to
        # the projections and subscribers at once). A request that fails midway is sent again by
        # its exporter, and the events' keys make the batches already committed no-ops.
        for start in range(0, len(mapped.events), MAX_BATCH_EVENTS):
            await self.core.append(mapped.events[start : start + MAX_BATCH_EVENTS])
        self.requests += 1
        self.counts["events"] += len(mapped.events)
        self.counts["rejected"] += mapped.rejected
        self.counts["ignored"] += mapped.ignored
        if mapped.rejected:
            return Receipt(mapped.rejected, mapped.why("log records" if signal == "logs" else "metric points"))
        return Receipt()

    def status(self, listening: str | None) -> dict[str, Any]:
        return {"listen": listening, "requests": self.requests, "refused": self.refused} | self.counts
