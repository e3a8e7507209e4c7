"""OpenTelemetry receiver benchmark: log records received per second by a real daemon against
decoding the same batches alone with opentelemetry-proto.

The batches are Claude Code's: protobuf ``ExportLogsServiceRequest`` bodies of ``--records``
records each (api_request, tool_decision, tool_result and user_prompt in turn, with the
attributes Claude Code 2.1.332 sends: about twenty each), every record distinct, over a few
sessions. Measured in the same run on the same machine:

- reference: each body decoded with the official opentelemetry-proto package
  (``ExportLogsServiceRequest.FromString``) and every record's attributes read into Python
  values: the least any receiver does before it can use a record;
- toka: the same bodies POSTed to ``/v1/logs`` of a real daemon (``python -m daemon`` with
  ``TOKA_OTEL_LISTEN``, a fresh TOKA_HOME, SQLite) over keep-alive connections, each answered
  once its events committed: HTTP, decoding, mapping, redaction, hashing, the commit. Sequential
  (one connection) and concurrent (``--connections``, whose requests share group commits).

Target: the concurrent rate at least 50% of the reference's. Run ``python
benchmarks/bench_otel.py`` (about half a minute on 2 cores); ``--json`` prints the results as
JSON.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench_foundation import DaemonProcess, Home, Row, machine, table, verdict
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

from daemon.client.sync import Client
from daemon.export.encode import key_values

TARGET = 0.5
REPS = 3
T0_NS = 1_767_225_600_000_000_000
COMMON = {
    "user.id": "9f" * 32,
    "terminal.type": "tmux",
    "anthropic.provider": "firstParty",
    "anthropic.custom_base_url": False,
    "prompt.id": "6d1c2a4e-8d1b-4c9a-9e57-3b1f2d6a7c01",
}


def record(n: int, session: str) -> LogRecord:
    kind = ("api_request", "tool_decision", "tool_result", "user_prompt")[n % 4]
    extra: dict[str, Any] = {
        "api_request": {"model": "claude-sonnet-4-5", "input_tokens": 1200 + n, "output_tokens": 300,
                        "cache_read_tokens": 40_000, "cache_creation_tokens": 2000, "cache_creation_5m_tokens": 2000,
                        "cache_creation_1h_tokens": 0, "cost_usd": 0.0271, "cost_usd_micros": 27100,
                        "duration_ms": 4100, "ttft_ms": 900, "request_id": f"req_{session[:8]}{n:08d}",
                        "speed": "normal", "query_source": "repl_main_thread"},
        "tool_decision": {"tool_name": "Read", "tool_use_id": f"toolu_{n:012d}", "decision": "accept",
                          "tool_source": "builtin", "source": "config", "permission_mode": "default"},
        "tool_result": {"tool_name": "Read", "tool_use_id": f"toolu_{n:012d}", "success": "true",
                        "duration_ms": "31", "tool_input_size_bytes": "120", "tool_result_size_bytes": "5400"},
        "user_prompt": {"prompt_length": "54", "prompt": "<REDACTED>", "message.uuid": f"m-{n}"},
    }[kind]  # fmt: skip
    attributes = {"event.name": kind, "event.timestamp": "2026-01-01T00:00:00.000Z", "event.sequence": n,
                  "session.id": session} | COMMON | extra  # fmt: skip
    return LogRecord(
        time_unix_nano=T0_NS + n * 1_000_000,
        observed_time_unix_nano=T0_NS + n * 1_000_000,
        body=AnyValue(string_value=f"claude_code.{kind}"),
        attributes=key_values(attributes),
    )


def batches(count: int, per_batch: int) -> list[bytes]:
    resource = Resource(attributes=key_values({"service.name": "claude-code"}))
    bodies = []
    for b in range(count):
        session = f"{b % 8:08x}-8d1b-4c9a-9e57-3b1f2d6a7c01"
        records = [record(b * per_batch + i, session) for i in range(per_batch)]
        scope = ScopeLogs(scope={"name": "com.anthropic.claude_code.events"}, log_records=records)
        request = ExportLogsServiceRequest(resource_logs=[ResourceLogs(resource=resource, scope_logs=[scope])])
        bodies.append(request.SerializeToString())
    return bodies


def _python(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return None if kind is None else getattr(value, kind)


def decode_alone(bodies: list[bytes]) -> float:
    """Seconds to decode every body and read every record's attributes."""
    start = time.perf_counter()
    for body in bodies:
        request = ExportLogsServiceRequest.FromString(body)
        for resource in request.resource_logs:
            for scope in resource.scope_logs:
                for item in scope.log_records:
                    {kv.key: _python(kv.value) for kv in item.attributes}
    return time.perf_counter() - start


def post_all(address: str, token: str, bodies: list[bytes], connections: int) -> float:
    """Seconds to POST every body over ``connections`` keep-alive connections, each answered."""
    host, port = address.rsplit(":", 1)
    headers = {"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {token}"}
    parts = [bodies[i::connections] for i in range(connections)]
    failures: list[str] = []

    def send(part: list[bytes]) -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        for body in part:
            conn.request("POST", "/v1/logs", body, headers)
            answer = conn.getresponse()
            answer.read()
            if answer.status != 200:
                failures.append(str(answer.status))
        conn.close()

    threads = [threading.Thread(target=send, args=(part,)) for part in parts]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(f"the receiver refused {len(failures)} batches: {failures[:3]}")
    return time.perf_counter() - start


def run(args: argparse.Namespace) -> list[Row]:
    records = args.batches * args.records
    with tempfile.TemporaryDirectory(prefix="tkbo", dir="/tmp") as root:
        rows: list[Row] = []
        reference, sequential, concurrent = [], [], []
        for rep in range(REPS):
            bodies = batches(args.batches, args.records)
            decode_alone(bodies[:5])  # warm-up
            reference.append(decode_alone(bodies))
            home = Home(Path(root), f"r{rep}")
            daemon = DaemonProcess(home, settings={"TOKA_OTEL_LISTEN": "127.0.0.1:0"})
            try:
                with Client(home.paths, autostart=False) as client:
                    address = client.call("status")["otel"]["listen"]
                token = home.paths.otel_token.read_text().strip()  # made by the daemon at its start
                half = len(bodies) // 2
                sequential.append(post_all(address, token, bodies[:half], 1) * 2)
                concurrent.append(post_all(address, token, bodies[half:], args.connections) * 2)
                with Client(home.paths, autostart=False) as client:
                    counted = client.call("status")["otel"]["log_records"]
                if counted != records:
                    raise RuntimeError(f"the receiver counted {counted} records of {records}")
            finally:
                daemon.stop()
            rates = [f"{records / seconds[-1]:,.0f}" for seconds in (reference, sequential, concurrent)]
            print(
                f"rep {rep + 1}: reference {rates[0]} rec/s, sequential {rates[1]}, concurrent {rates[2]}",
                file=sys.stderr,
            )
        ref = records / statistics.median(reference)
        runs = (("received, 1 connection", sequential), (f"received, {args.connections} connections", concurrent))
        for name, seconds in runs:
            got = records / statistics.median(seconds)
            ratio = got / ref
            target = f"≥ {TARGET:.0%}" if "connections" in name else "info"
            result = verdict(ratio >= TARGET) if "connections" in name else "info"
            rows.append(Row(name, f"{got:,.0f} rec/s", f"{ref:,.0f} rec/s", f"{ratio:.0%}", target, result,
                            {"toka_per_s": got, "reference_per_s": ref, "ratio": ratio}))  # fmt: skip
        return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=400, help="batches per run (half sequential, half concurrent)")
    parser.add_argument("--records", type=int, default=50, help="log records per batch")
    parser.add_argument("--connections", type=int, default=4, help="concurrent connections")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    rows = run(args)
    if args.json:
        print(json.dumps({"machine": machine(), "rows": [asdict(r) for r in rows]}, indent=2))
    else:
        print(table(rows))
    return 0 if all(r.result != "SHORT" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
