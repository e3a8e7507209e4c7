"""Batches as Claude Code and Codex send them, built with opentelemetry-proto, and a daemon whose
receiver listens on a free loopback port."""

from __future__ import annotations

import gzip
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

import pytest
from daemons import Spawned

pytest.importorskip("aiohttp", reason="the receiver needs the otel extra: pip install -e '.[otel]'")

from google.protobuf.json_format import MessageToDict  # noqa: E402
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest  # noqa: E402
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest  # noqa: E402
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue  # noqa: E402
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs  # noqa: E402
from opentelemetry.proto.metrics.v1 import metrics_pb2  # noqa: E402
from opentelemetry.proto.resource.v1.resource_pb2 import Resource  # noqa: E402

T0_NS = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z


def value(item: Any) -> AnyValue:
    if isinstance(item, bool):
        return AnyValue(bool_value=item)
    if isinstance(item, int):
        return AnyValue(int_value=item)
    if isinstance(item, float):
        return AnyValue(double_value=item)
    return AnyValue(string_value=str(item))


def attributes(items: dict[str, Any]) -> list[KeyValue]:
    return [KeyValue(key=key, value=value(item)) for key, item in items.items()]


def claude_record(name: str, session: str, sequence: int, **extra: Any) -> LogRecord:
    """A Claude Code event record: body ``claude_code.X``, ``event.name`` ``X``."""
    return LogRecord(
        time_unix_nano=T0_NS + sequence * 1_000_000,
        observed_time_unix_nano=T0_NS + sequence * 1_000_000,
        body=AnyValue(string_value=f"claude_code.{name}"),
        attributes=attributes(
            {"event.name": name, "session.id": session, "event.sequence": sequence, "prompt.id": "p-1"} | extra
        ),
    )


def api_request(session: str, sequence: int, request: str | None, *, cost: float, **tokens: Any) -> LogRecord:
    """Claude Code's record of one API request; without a request id when ``request`` is None,
    as behind a gateway that returns none."""
    counts = {"input_tokens": 100, "output_tokens": 20, "cache_read_tokens": 1000, "cache_creation_tokens": 0}
    named = {} if request is None else {"request_id": request}
    return claude_record(
        "api_request",
        session,
        sequence,
        model="claude-sonnet-4-5",
        cost_usd=cost,
        duration_ms=900,
        **(named | counts | tokens),
    )


def codex_record(name: str, conversation: str, stamp: str, **extra: Any) -> LogRecord:
    """A Codex event record: no body, ``event.name`` ``codex.X``, a time of 0."""
    return LogRecord(
        time_unix_nano=0,
        observed_time_unix_nano=T0_NS,
        severity_number=9,
        event_name="event otel/src/events/session_telemetry.rs:1153",
        attributes=attributes(
            {"event.name": f"codex.{name}", "event.timestamp": stamp, "conversation.id": conversation} | extra
        ),
    )


def logs_request(
    records: list[LogRecord], service: str = "claude-code", scope: str = "com.anthropic.claude_code.events"
) -> ExportLogsServiceRequest:
    resource = Resource(attributes=attributes({"service.name": service, "service.version": "2.1.332"}))
    return ExportLogsServiceRequest(
        resource_logs=[
            ResourceLogs(resource=resource, scope_logs=[ScopeLogs(scope={"name": scope}, log_records=records)])
        ]
    )


def sum_metric(
    name: str, unit: str, points: list[tuple[dict[str, Any], float]], temporality: int = 1
) -> metrics_pb2.Metric:
    return metrics_pb2.Metric(
        name=name,
        unit=unit,
        sum=metrics_pb2.Sum(
            aggregation_temporality=temporality,
            is_monotonic=True,
            data_points=[
                metrics_pb2.NumberDataPoint(
                    attributes=attributes(labels),
                    start_time_unix_nano=T0_NS,
                    time_unix_nano=T0_NS + 60_000_000_000,
                    as_double=amount,
                )
                for labels, amount in points
            ],
        ),
    )


def metrics_request(metrics: list[metrics_pb2.Metric]) -> ExportMetricsServiceRequest:
    resource = Resource(attributes=attributes({"service.name": "claude-code"}))
    scope = metrics_pb2.ScopeMetrics(scope={"name": "com.anthropic.claude_code"}, metrics=metrics)
    return ExportMetricsServiceRequest(
        resource_metrics=[metrics_pb2.ResourceMetrics(resource=resource, scope_metrics=[scope])]
    )


def encoded(message: Any, encoding: str, compressed: bool = False) -> tuple[bytes, dict[str, str]]:
    """The body and headers of ``message`` as protobuf or as OTLP JSON, gzip-compressed or not."""
    if encoding == "protobuf":
        body, headers = message.SerializeToString(), {"Content-Type": "application/x-protobuf"}
    else:
        body, headers = (
            json.dumps(MessageToDict(message, use_integers_for_enums=True)).encode(),
            {"Content-Type": "application/json"},
        )
    if compressed:
        body, headers = gzip.compress(body), headers | {"Content-Encoding": "gzip"}
    return body, headers


@dataclass
class Answer:
    status: int
    body: bytes
    content_type: str


@dataclass
class Receiver:
    url: str  # http://127.0.0.1:PORT
    token: str | None = None  # sent as ``Authorization: Bearer ...`` unless a request names its own

    def post(self, path: str, body: bytes, headers: dict[str, str], method: str = "POST") -> Answer:
        if self.token is not None and "Authorization" not in headers:
            headers = headers | {"Authorization": f"Bearer {self.token}"}
        request = urllib.request.Request(
            self.url + path, data=body if method == "POST" else None, headers=headers, method=method
        )
        try:
            with urllib.request.urlopen(request, timeout=15) as response:
                return Answer(response.status, response.read(), response.headers.get("Content-Type", ""))
        except urllib.error.HTTPError as error:
            return Answer(error.code, error.read(), error.headers.get("Content-Type", ""))

    def send(
        self, message: Any, encoding: str = "protobuf", compressed: bool = False, path: str = "/v1/logs"
    ) -> Answer:
        return self.post(path, *encoded(message, encoding, compressed))


def receiver_of(status: dict[str, Any], token: str | None = None) -> Receiver:
    return Receiver(f"http://{status['otel']['listen']}", token)


def token_of(daemon: Spawned, env: dict[str, str]) -> str | None:
    """The token the daemon's receiver takes: the configured one, else the one it made on its
    first start (None when there is neither)."""
    if env.get("TOKA_OTEL_TOKEN"):
        return env["TOKA_OTEL_TOKEN"]
    made = daemon.paths.config_dir / "otel.token"
    return made.read_text().strip() if made.exists() else None


@dataclass
class OtelDaemon:
    daemon: Spawned
    receiver: Receiver

    def call(self, op: str, **args: Any) -> Any:
        with self.daemon.client() as client:
            return client.call(op, **args)

    def report(self) -> dict[str, Any]:
        return self.call("report", kind="session", timezone="UTC")  # type: ignore[no-any-return]

    def compare(self) -> dict[str, Any]:
        return self.call("report.compare", against="telemetry", timezone="UTC")  # type: ignore[no-any-return]

    def events(self, session: str) -> list[dict[str, Any]]:
        return self.call("events.query", session=session)["events"]  # type: ignore[no-any-return]

    def otel(self) -> dict[str, Any]:
        return self.daemon.status()["otel"]  # type: ignore[no-any-return]
