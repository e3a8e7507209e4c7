"""What an OTLP request decodes to, the same for protobuf and JSON bodies: log records and
metric points with their resource and scope flattened in, attribute values as plain Python
values (str, int, float, bool, list, dict; bytes as hex). Spans are only counted: the receiver
accepts traces so that an exporter configured for all three signals is not refused, and keeps
none of them (docs/otel.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The signals, by the path they are posted to.
SIGNALS = {"/v1/logs": "logs", "/v1/metrics": "metrics", "/v1/traces": "traces"}

# Metric temporality (opentelemetry.proto.metrics.v1.AggregationTemporality).
DELTA = 1
CUMULATIVE = 2


class Refused(Exception):
    """A request answered with an HTTP error and nothing kept: ``status`` and a message for the
    exporter's log."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(slots=True)
class LogRecord:
    resource: dict[str, Any]
    scope: str
    time_ns: int  # 0 when the exporter did not say (Codex)
    observed_ns: int
    severity: int
    body: Any
    attributes: dict[str, Any]
    trace_id: str = ""  # hex; "" when absent
    span_id: str = ""


@dataclass(slots=True)
class MetricPoint:
    resource: dict[str, Any]
    scope: str
    metric: str
    unit: str
    shape: str  # sum, gauge, histogram, exponential_histogram, summary
    temporality: int  # DELTA, CUMULATIVE, or 0 (unspecified; gauges)
    attributes: dict[str, Any]
    start_ns: int
    time_ns: int
    value: float | int  # a sum's or gauge's value; a histogram's sum
    count: int = 0  # a histogram's count


@dataclass(slots=True)
class Decoded:
    """One request's content."""

    logs: list[LogRecord] = field(default_factory=list)
    points: list[MetricPoint] = field(default_factory=list)
    spans: int = 0

    @property
    def items(self) -> int:
        return len(self.logs) + len(self.points) + self.spans
