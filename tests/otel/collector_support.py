"""A test collector: an OTLP/HTTP trace receiver in the test process (the standard library's HTTP
server in a thread) that decodes each request with opentelemetry-proto and keeps every span it
receives, so tests count what arrived, how often, and what it says. It can be taken down and
brought back on the same port, and told to refuse requests with a status of the test's choosing."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("opentelemetry.proto", reason="the export needs the otel extra: pip install -e '.[otel]'")

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue  # noqa: E402


def plain(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return None if kind is None else getattr(value, kind)


@dataclass(frozen=True)
class Received:
    """One span as the collector decoded it."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    status: int
    resource: dict[str, Any]


@dataclass
class Collector:
    port: int = 0
    refuse_with: int | None = None  # answer every request with this status instead
    spans: list[Received] = field(default_factory=list)
    requests: int = 0
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Collector:
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the standard library's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with collector._lock:
                    collector.requests += 1
                    collector.headers.append(dict(self.headers))
                    collector.paths.append(self.path)
                    refuse = collector.refuse_with
                if refuse is not None:
                    self.send_response(refuse)
                    self.send_header("Content-Type", "text/plain")
                    self.end_headers()
                    self.wfile.write(b"refused by the test")
                    return
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                with collector._lock:
                    collector.spans.extend(decoded(request))
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = server.server_address[1]
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Down: nothing listens on the port until :meth:`start` brings it back."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def received(self) -> list[Received]:
        with self._lock:
            return list(self.spans)

    def by_id(self) -> dict[str, Received]:
        return {span.span_id: span for span in self.received()}

    def repeats(self) -> dict[str, int]:
        """Span ids received more than once, with how often."""
        return {span: n for span, n in Counter(s.span_id for s in self.received()).items() if n > 1}


def decoded(request: ExportTraceServiceRequest) -> list[Received]:
    spans = []
    for resource_spans in request.resource_spans:
        resource = {kv.key: plain(kv.value) for kv in resource_spans.resource.attributes}
        for scope in resource_spans.scope_spans:
            for span in scope.spans:
                spans.append(
                    Received(
                        span.trace_id.hex(),
                        span.span_id.hex(),
                        span.parent_span_id.hex(),
                        span.name,
                        span.kind,
                        span.start_time_unix_nano,
                        span.end_time_unix_nano,
                        {kv.key: plain(kv.value) for kv in span.attributes},
                        [(e.name, {kv.key: plain(kv.value) for kv in e.attributes}) for e in span.events],
                        span.status.code,
                        resource,
                    )
                )
    return spans


def usage_totals(spans: list[Received]) -> dict[str, Any]:
    """The request spans' tokens and cost in `toka report`'s terms (input: the uncached input)."""
    totals = {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cache_creation_tokens": 0, "cache_read_tokens": 0}
    cost = 0.0
    for span in spans:
        a = span.attributes
        if a.get("gen_ai.operation.name") != "chat":
            continue
        reads, writes = a["gen_ai.usage.cache_read.input_tokens"], a["gen_ai.usage.cache_creation.input_tokens"]
        totals["calls"] += 0 if a.get("toka.usage.revision") else 1
        totals["input_tokens"] += a["gen_ai.usage.input_tokens"] - reads - writes
        totals["output_tokens"] += a["gen_ai.usage.output_tokens"]
        totals["cache_creation_tokens"] += writes
        totals["cache_read_tokens"] += reads
        cost += a.get("gen_ai.usage.cost", 0.0)
    return totals | {"cost_usd": round(cost, 6)}
