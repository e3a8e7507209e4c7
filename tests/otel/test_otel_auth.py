"""Who may write through the receiver: a token is required by default (one made on the daemon's
first start, 0600, unless otel.token names one), the Bearer scheme in any case, and only with
otel.require_token = false is the port open; records with negative costs or token counts are
refused one by one (and so are token and cost counters' negative points), the good records of
the same request kept."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable

from otel_support import (
    OtelDaemon,
    api_request,
    codex_record,
    encoded,
    logs_request,
    metrics_request,
    sum_metric,
)

GOOD = logs_request([api_request("s", 1, "req_1", cost=0.5)])


def test_a_request_without_the_token_is_refused_401_with_a_hint(start_otel: Callable[..., OtelDaemon]) -> None:
    otel = start_otel()
    made = otel.daemon.paths.config_dir / "otel.token"
    body, headers = encoded(GOOD, "json")

    refused = otel.receiver.post("/v1/logs", body, headers | {"Authorization": ""})
    wrong = otel.receiver.post("/v1/logs", body, headers | {"Authorization": "Bearer not-it"})

    assert (refused.status, wrong.status) == (401, 401)
    message = json.loads(refused.body)["message"]
    assert "bearer token" in message and str(made) in message and "toka integrate" in message
    assert otel.daemon.status()["events"] == 0
    assert stat.S_IMODE(made.stat().st_mode) == 0o600 and len(made.read_text().strip()) >= 32
    assert otel.receiver.send(GOOD).status == 200  # with the token the daemon made
    assert otel.report()["totals"]["calls"] == 1


def test_the_token_survives_a_restart(start_otel: Callable[..., OtelDaemon]) -> None:
    first = start_otel()
    token = first.receiver.token
    assert first.daemon.stop() == 0
    second = start_otel()
    assert second.receiver.token == token and second.receiver.send(GOOD).status == 200


def test_lowercase_bearer_is_accepted(start_otel: Callable[..., OtelDaemon]) -> None:
    otel = start_otel(TOKA_OTEL_TOKEN="s3cret")
    body, headers = encoded(GOOD, "protobuf")
    assert otel.receiver.post("/v1/logs", body, headers | {"Authorization": "bearer s3cret"}).status == 200
    assert otel.receiver.post("/v1/logs", body, headers | {"Authorization": "BEARER  s3cret"}).status == 200
    assert otel.receiver.post("/v1/logs", body, headers | {"Authorization": "Basic s3cret"}).status == 401
    assert otel.report()["totals"]["calls"] == 1


def test_without_require_token_the_port_is_open(start_otel: Callable[..., OtelDaemon]) -> None:
    otel = start_otel(TOKA_OTEL_REQUIRE_TOKEN="false")
    body, headers = encoded(GOOD, "protobuf")
    assert otel.receiver.post("/v1/logs", body, headers | {"Authorization": ""}).status == 200
    assert not (otel.daemon.paths.config_dir / "otel.token").exists()


def test_negative_costs_and_token_counts_are_refused_and_the_good_records_kept(otel_daemon: OtelDaemon) -> None:
    stamp = "2026-01-01T00:00:05.000Z"
    request = logs_request([
        api_request("s", 1, "req_good", cost=0.08),
        api_request("s", 2, "req_cost", cost=-2025.0),
        api_request("s", 3, "req_tokens", cost=0.01, input_tokens=-5000),
        api_request("s", 4, "req_micros", cost=0.0, cost_usd_micros=-10),
        api_request("s", 5, "req_cache", cost=0.01, cache_read_tokens="-1"),
        api_request("s", 6, "req_nan", cost=float("nan")),
    ])  # fmt: skip
    codex = logs_request(
        [codex_record("sse_event", "c", stamp, **{"event.kind": "response.completed", "input_token_count": -7,
                                                  "output_token_count": 3})],
        service="codex_exec", scope="codex_otel.log_only",
    )  # fmt: skip

    answer = otel_daemon.receiver.send(request, "json")
    codex_answer = otel_daemon.receiver.send(codex, "json")

    assert (answer.status, codex_answer.status) == (200, 200)
    partial = json.loads(answer.body)["partialSuccess"]
    assert partial["rejectedLogRecords"] == "5"
    for named in ("cost_usd", "input_tokens", "cost_usd_micros", "cache_read_tokens"):
        assert named in partial["errorMessage"]
    assert "negative" in partial["errorMessage"]
    assert json.loads(codex_answer.body)["partialSuccess"]["rejectedLogRecords"] == "1"
    totals = otel_daemon.report()["totals"]
    assert (totals["calls"], totals["input_tokens"]) == (1, 100)
    assert [e["payload"]["request_id"] for e in otel_daemon.events("s") if e["kind"] == "usage"] == ["req_good"]
    assert [row["session"] for row in otel_daemon.report()["rows"]] == ["s"]
    assert otel_daemon.otel()["rejected"] == 6


def test_negative_or_non_finite_counter_points_are_refused_and_the_good_points_kept(otel_daemon: OtelDaemon) -> None:
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceResponse

    labels = {"session.id": "m", "model": "claude-sonnet-4-5"}
    metrics = metrics_request([
        sum_metric("claude_code.cost.usage", "USD", [(labels, 0.25), (labels, -2025.0)]),
        sum_metric("claude_code.token.usage", "tokens", [(labels | {"type": "input"}, -1e9)]),
        sum_metric("claude_code.session.count", "count", [(labels, float("inf"))]),
    ])  # fmt: skip

    answer = otel_daemon.receiver.send(metrics, path="/v1/metrics")

    assert answer.status == 200
    partial = ExportMetricsServiceResponse.FromString(answer.body).partial_success
    assert partial.rejected_data_points == 3
    assert "negative" in partial.error_message and "finite" in partial.error_message
    [counters] = [e for e in otel_daemon.events("m") if e["kind"] == "telemetry.counters"]
    assert [point["value"] for point in counters["payload"]["points"]] == [0.25]
