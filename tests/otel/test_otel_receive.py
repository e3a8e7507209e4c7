"""The daemon's OTLP receiver, end to end: batches built with opentelemetry-proto, sent as
protobuf and as OTLP JSON, gzip-compressed or not, to a real daemon on a real port; what the
reports then say, to the token and the cent."""

from __future__ import annotations

from decimal import Decimal

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from otel_support import OtelDaemon, api_request, claude_record, codex_record, logs_request, metrics_request, sum_metric

ENCODINGS = [("protobuf", False), ("protobuf", True), ("json", False), ("json", True)]


@pytest.mark.parametrize(("encoding", "compressed"), ENCODINGS, ids=["protobuf", "protobuf-gzip", "json", "json-gzip"])
def test_claude_code_requests_total_what_was_sent_to_the_token_and_the_cent(
    otel_daemon: OtelDaemon, encoding: str, compressed: bool
) -> None:
    sent = [
        api_request("s-1", 1, "req_1", cost=0.012345, input_tokens=1234, output_tokens=56),
        api_request("s-1", 2, "req_2", cost=0.2, input_tokens="4000", output_tokens="700", cache_read_tokens="0"),
        api_request("s-2", 1, "req_3", cost=0, input_tokens=10),  # an int cost, as the JS exporter writes 0
    ]
    answer = otel_daemon.receiver.send(logs_request(sent), encoding, compressed)
    assert answer.status == 200

    report = otel_daemon.report()
    rows = {row["session"]: row for row in report["rows"]}
    assert (rows["s-1"]["calls"], rows["s-1"]["input_tokens"], rows["s-1"]["output_tokens"]) == (2, 5234, 756)
    assert rows["s-1"]["cache_read_tokens"] == 1000
    assert (rows["s-2"]["calls"], rows["s-2"]["input_tokens"], rows["s-2"]["output_tokens"]) == (1, 10, 20)
    assert rows["s-1"]["usage_source"] == "telemetry" and rows["s-1"]["source"] == "claude-code"
    assert report["totals"]["telemetry_calls"] == 3
    compare = otel_daemon.compare()
    assert Decimal(str(compare["totals"]["agent_cost_usd"])) == Decimal("0.212345")


def test_a_retried_batch_adds_nothing(otel_daemon: OtelDaemon) -> None:
    batch = logs_request(
        [api_request("s", 1, "req_1", cost=0.5), claude_record("user_prompt", "s", 2, prompt_length="14")]
    )
    for _ in range(3):
        assert otel_daemon.receiver.send(batch).status == 200

    assert otel_daemon.report()["totals"]["calls"] == 1
    kinds = [event["kind"] for event in otel_daemon.events("s")]
    assert kinds == ["session.meta", "usage", "telemetry"]


def test_events_keep_their_agents_order_and_prompt(otel_daemon: OtelDaemon) -> None:
    records = [
        claude_record("tool_result", "s", 3, tool_name="Read", success="true", duration_ms="31"),
        claude_record("tool_decision", "s", 2, tool_name="Read", decision="accept", source="config"),
        claude_record("user_prompt", "s", 1, prompt_length="14", prompt="<REDACTED>"),
        claude_record("plugin_loaded", "s", 0, plugin="x"),
        claude_record("api_error", "s", 4, model="claude-sonnet-4-5", status_code=529, error="overloaded"),
    ]
    assert otel_daemon.receiver.send(logs_request(records)).status == 200

    events = otel_daemon.events("s")
    assert [e["kind"] for e in events] == ["session.meta", "telemetry"]
    group = events[1]["payload"]
    assert [(r["event"], r["sequence"]) for r in group["records"]] == [
        ("claude_code.plugin_loaded", 0),
        ("claude_code.user_prompt", 1),
        ("claude_code.tool_decision", 2),
        ("claude_code.tool_result", 3),
        ("claude_code.api_error", 4),
    ]
    assert (group["client"], group["prompt_id"]) == ("claude-code", "p-1")
    assert group["records"][3]["attributes"]["duration_ms"] == "31"
    assert group["records"][0]["ts"] == events[0]["ts"] == events[1]["ts"] == "2026-01-01T00:00:00.000000Z"


def test_prompt_text_is_redacted_before_it_is_stored(otel_daemon: OtelDaemon) -> None:
    prompt = "mail me at jane.doe@example.com with key AKIAIOSFODNN7EXAMPLE"
    record = claude_record("user_prompt", "s", 1, prompt=prompt, prompt_text=prompt, prompt_length=len(prompt))
    assert otel_daemon.receiver.send(logs_request([record]), "json").status == 200

    stored = otel_daemon.events("s")[-1]["payload"]["records"][0]["attributes"]
    for name in ("prompt", "prompt_text"):
        assert "jane.doe@example.com" not in stored[name] and "[redacted:email]" in stored[name]


def test_codex_records_land_in_their_conversation_at_their_own_time(otel_daemon: OtelDaemon) -> None:
    stamp = "2026-01-02T03:04:05.678Z"
    records = [
        codex_record("user_prompt", "c-1", stamp, prompt_length="5", prompt="[REDACTED]", model="gpt-5"),
        codex_record("sse_event", "c-1", stamp, **{"event.kind": "response.created", "duration_ms": "3"}),
        codex_record("sse_event", "c-1", stamp, **{"event.kind": "response.completed", "duration_ms": "9"}),
        codex_record(
            "sse_event",
            "c-1",
            stamp,
            model="gpt-5",
            input_token_count="1500",
            output_token_count="77",
            cached_token_count=1024,
            reasoning_token_count=20,
            tool_token_count="1577",
            **{"event.kind": "response.completed"},
        ),
        codex_record(
            "tool_result",
            "c-1",
            stamp,
            tool_name="exec_command",
            call_id="call_1",
            output="ok " * 40_000,
            arguments='{"cmd": "echo jane@example.com"}',
            success="true",
        ),  # fmt: skip
    ]
    request = logs_request(records, service="codex_exec", scope="codex_otel.log_only")
    assert otel_daemon.receiver.send(request, "json").status == 200

    events = otel_daemon.events("c-1")
    assert [e["kind"] for e in events] == ["session.meta", "usage", "telemetry"]
    assert {e["ts"] for e in events} == {"2026-01-02T03:04:05.678000Z"}
    records = events[2]["payload"]["records"]
    assert [r["event"] for r in records] == ["codex.user_prompt", "codex.tool_result"]
    usage = otel_daemon.report()["rows"][0]
    assert (usage["calls"], usage["input_tokens"], usage["cache_read_tokens"], usage["output_tokens"]) == (
        1,
        476,
        1024,
        77,
    )
    result = records[1]
    assert len(result["attributes"]["output"].encode()) == 64 * 1024
    assert result["cut_bytes"] == {"output": 120_000}
    assert "[redacted:email]" in result["attributes"]["arguments"]
    assert otel_daemon.otel()["ignored"] == 2  # the two stream events without tokens


def test_records_without_a_session_are_rejected_in_a_partial_success(otel_daemon: OtelDaemon) -> None:
    orphan = claude_record("api_request", "s", 1)
    del orphan.attributes[1]  # session.id
    batch = logs_request([orphan, api_request("s", 2, "req_2", cost=0.1)])

    answer = otel_daemon.receiver.send(batch)

    assert answer.status == 200
    partial = ExportLogsServiceResponse.FromString(answer.body).partial_success
    assert partial.rejected_log_records == 1 and "session.id" in partial.error_message
    assert otel_daemon.report()["totals"]["calls"] == 1
    json_answer = otel_daemon.receiver.send(batch, "json")
    assert b'"rejectedLogRecords": "1"' in json_answer.body


def test_metrics_are_counters_beside_the_requests_never_a_second_copy(otel_daemon: OtelDaemon) -> None:
    labels = {"session.id": "s", "model": "claude-sonnet-4-5", "user.id": "u"}
    metrics = [
        sum_metric("claude_code.cost.usage", "USD", [(labels, 0.25)]),
        sum_metric("claude_code.token.usage", "tokens", [(labels | {"type": "input"}, 200.0)]),
        sum_metric("claude_code.cost.usage", "USD", [({"model": "x"}, 9.0)]),  # no session: left out
    ]
    requests = logs_request([api_request("s", 1, "r", cost=0.25)])
    assert otel_daemon.receiver.send(requests).status == 200
    assert otel_daemon.receiver.send(metrics_request(metrics), path="/v1/metrics").status == 200
    assert otel_daemon.receiver.send(metrics_request(metrics[:1]), "json", path="/v1/metrics").status == 200

    assert otel_daemon.report()["totals"]["calls"] == 1
    counters = [e for e in otel_daemon.events("s") if e["kind"] == "telemetry.counters"]
    assert len(counters) == 2
    row = otel_daemon.compare()["rows"][0]
    assert (row["agent_cost_usd"], row["metric_cost_usd"]) == (0.25, 0.5)


def test_cumulative_counters_are_read_as_their_latest_value(otel_daemon: OtelDaemon) -> None:
    labels = {"session.id": "s", "model": "claude-sonnet-4-5"}
    for total in (0.1, 0.3):
        metric = sum_metric("claude_code.cost.usage", "USD", [(labels, total)], temporality=2)
        metric.sum.data_points[0].time_unix_nano += int(total * 1e9)
        assert otel_daemon.receiver.send(metrics_request([metric]), path="/v1/metrics").status == 200

    assert otel_daemon.compare()["rows"][0]["metric_cost_usd"] == 0.3


def test_traces_are_accepted_and_not_kept(otel_daemon: OtelDaemon) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.trace.v1 import trace_pb2

    spans = [trace_pb2.Span(name="session_loop", trace_id=b"\x01" * 16, span_id=b"\x02" * 8)] * 3
    request = ExportTraceServiceRequest(
        resource_spans=[trace_pb2.ResourceSpans(scope_spans=[trace_pb2.ScopeSpans(spans=spans)])]
    )
    assert otel_daemon.receiver.send(request, path="/v1/traces").status == 200
    assert otel_daemon.receiver.send(request, "json", path="/v1/traces").status == 200

    status = otel_daemon.otel()
    assert (status["spans"], status["events"]) == (6, 0)
    assert otel_daemon.daemon.status()["events"] == 0
