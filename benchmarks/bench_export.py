"""OpenTelemetry export benchmark: what the forwarder costs an append while its collector is down,
and how fast `toka export otel` sends spans against encoding the same spans alone.

Measured in the same run on the same machine:

- append p50: one client appending one event per request (``events.append``: a user message, a
  usage event, a tool call and its result in turn) to a daemon with the forwarder on and its
  collector down (``export.otlp.endpoint`` at a loopback port nothing listens on: the forwarder
  holds its first spans and waits to try again, its queue fills and overflows to the log),
  against the same appends to a daemon with the forwarder off. Target ≤ 1.1×. The two daemons
  alternate, median of ``REPS`` runs each.
- export throughput: a session of ``--events`` events sent by ``export.otel`` to a collector in
  this process (the standard library's HTTP server, decoding every request with
  opentelemetry-proto to count the spans), in spans per second, against encoding the same spans
  alone with opentelemetry-proto (``encode_spans``, in requests of 512): the part of an export
  any exporter pays. Informational.

Run ``python benchmarks/bench_export.py`` (about a minute on 2 cores); ``--json`` prints the
results as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench_foundation import DaemonProcess, Home, Row, machine, table, verdict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from daemon.client.sync import Client
from daemon.export.encode import encode_spans
from daemon.export.spans import Span, SpanEvent

TARGET = 1.1
REPS = 3
BATCH = 512


def events(session: str, count: int) -> list[dict[str, Any]]:
    """A session's worth of events: prompt, request, tool call, tool result, in turn."""
    out = []
    for n in range(count):
        ts = f"2026-03-01T10:{(n // 600) % 60:02d}:{(n // 10) % 60:02d}.{n % 10:06d}Z"
        step, call = n % 4, f"toolu_{n // 4:010d}"
        kind, payload = (
            ("message", {"role": "user", "text": f"step {n}: look at src/module_{n % 97}.py"}),
            ("usage", {"model": "claude-sonnet-4-5", "input_tokens": 1200 + n, "output_tokens": 300,
                       "cache_read_tokens": 40_000, "cache_creation_tokens": 2000, "request_id": f"req_{n:010d}"}),
            ("tool.call", {"tool": "Read", "tool_use_id": call, "input": {"file_path": f"src/module_{n}.py"}}),
            ("tool.result", {"tool_use_id": call, "output": f"contents of module {n}", "is_error": False}),
        )[step]  # fmt: skip
        out.append({"session": session, "agent": "main", "kind": kind, "ts": ts, "payload": payload})
    return out


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def append_p50(home: Home, settings: dict[str, str], count: int) -> float:
    """Median seconds of ``count`` single-event appends to a fresh daemon with ``settings``."""
    daemon = DaemonProcess(home, settings=settings)
    try:
        batch = events(f"p50-{home.root.name}", count + 200)
        times = []
        with Client(home.paths, autostart=False) as client:
            for n, event in enumerate(batch):
                start = time.perf_counter()
                client.call("events.append", events=[event])
                if n >= 200:  # warm-up first
                    times.append(time.perf_counter() - start)
            if settings:
                export = client.call("status")["export"]
                if export["sent_spans"] or not export["retries"]:
                    raise RuntimeError(f"the collector was meant to be down: {export}")
        return statistics.median(times)
    finally:
        daemon.stop()


class Counting:
    """A collector that decodes every request and counts its spans."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        counter = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                request = ExportTraceServiceRequest.FromString(body)
                for resource in request.resource_spans:
                    for scope in resource.scope_spans:
                        counter.spans.extend(_span(item) for item in scope.spans)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


def _plain(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else ""


def _span(item: Any) -> Span:
    """The received span back as toka's, for the reference to encode again."""
    return Span(
        item.trace_id,
        item.span_id,
        item.parent_span_id,
        item.name,
        item.kind,
        item.start_time_unix_nano,
        item.end_time_unix_nano,
        {kv.key: _plain(kv.value) for kv in item.attributes},
        tuple(
            SpanEvent(e.name, e.time_unix_nano, {kv.key: _plain(kv.value) for kv in e.attributes}) for e in item.events
        ),
    )


def encode_alone(spans: list[Span]) -> float:
    start = time.perf_counter()
    for first in range(0, len(spans), BATCH):
        encode_spans(spans[first : first + BATCH])
    return time.perf_counter() - start


def run(args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="tkbx", dir="/tmp") as root:
        off, on = [], []
        for rep in range(REPS):
            down = {"TOKA_EXPORT_OTLP_ENDPOINT": f"http://127.0.0.1:{free_port()}"}
            order = [("off", {}), ("on", down)] if rep % 2 == 0 else [("on", down), ("off", {})]
            for name, settings in order:
                seconds = append_p50(Home(Path(root), f"{name}{rep}"), settings, args.appends)
                (off if name == "off" else on).append(seconds)
            print(f"rep {rep + 1}: append p50 off {off[-1] * 1e6:,.0f} µs, on {on[-1] * 1e6:,.0f} µs", file=sys.stderr)
        p50_off, p50_on = statistics.median(off), statistics.median(on)
        ratio = p50_on / p50_off
        rows.append(Row("append p50, forwarder on, collector down", f"{p50_on * 1e6:,.0f} µs",
                        f"{p50_off * 1e6:,.0f} µs (off)", f"{ratio:.2f}×", f"≤ {TARGET}×", verdict(ratio <= TARGET),
                        {"on_s": p50_on, "off_s": p50_off, "ratio": ratio}))  # fmt: skip

        collector = Counting()
        home = Home(Path(root), "export")
        daemon = DaemonProcess(home)
        try:
            with Client(home.paths, autostart=False, timeout=600) as client:
                batch = events("export", args.events)
                for first in range(0, len(batch), 500):
                    client.call("events.append", events=batch[first : first + 500])
                sent, seconds = [], []
                for _ in range(REPS):
                    collector.spans.clear()
                    start = time.perf_counter()
                    summary = client.call("export.otel", endpoint=collector.url, sessions=["export"])
                    seconds.append(time.perf_counter() - start)
                    sent.append(summary["spans"])
        finally:
            daemon.stop()
        if len(collector.spans) != sent[-1]:
            raise RuntimeError(f"the collector got {len(collector.spans)} spans of {sent[-1]}")
        spans = list(collector.spans)
        encode_alone(spans[:BATCH])  # warm-up
        reference = statistics.median(encode_alone(spans) for _ in range(REPS))
        got, ref = len(spans) / statistics.median(seconds), len(spans) / reference
        rows.append(Row("export otel", f"{got:,.0f} spans/s", f"{ref:,.0f} spans/s (encoding alone)",
                        f"{got / ref:.0%}", "info", "info",
                        {"toka_per_s": got, "reference_per_s": ref, "spans": len(spans)}))  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--appends", type=int, default=2000, help="timed single-event appends per daemon")
    parser.add_argument("--events", type=int, default=20_000, help="events of the exported session")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    rows = run(args)
    if args.json:
        print(json.dumps({"machine": machine(), "load": os.getloadavg(), "rows": [asdict(r) for r in rows]}, indent=2))
    else:
        print(f"load average before: {os.getloadavg()[0]:.2f}", file=sys.stderr)
        print(table(rows))
    return 0 if all(r.result != "SHORT" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
