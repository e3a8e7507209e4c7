"""Telemetry and transcripts together: a request both report counts once in every report, in
the session the transcript fills, and the reports say which source they used; the official
OpenTelemetry SDK's exporter is received like the agents' own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from otel_support import OtelDaemon, api_request, codex_record, logs_request

SESSION = "0f3c2a4e-8d1b-4c9a-9e57-3b1f2d6a7c01"


def transcript(path: Path, requests: list[tuple[str | None, int, int]]) -> Path:
    """A Claude Code transcript of one assistant response per (request id, input, output); a
    record without a ``requestId`` where the id is None."""
    lines = []
    for number, (request, input_tokens, output_tokens) in enumerate(requests):
        lines.append(
            {
                "type": "assistant",
                "uuid": f"u-{number}",
                "sessionId": SESSION,
                **({} if request is None else {"requestId": request}),
                "timestamp": f"2026-01-01T00:0{number}:00.000Z",
                "cwd": "/work/shop",
                "message": {
                    "id": f"msg_{number}",
                    "model": "claude-sonnet-4-5",
                    "role": "assistant",
                    "content": [{"type": "text", "text": "done"}],
                    "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens,
                              "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 0},
                },
            }
        )  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def toka(*args: str) -> None:
    subprocess.run([Path(sys.executable).parent / "toka", *args], check=True, capture_output=True, timeout=60)


def test_a_request_in_transcript_and_telemetry_counts_once(otel_daemon: OtelDaemon, tmp_path: Path) -> None:
    toka("import", str(transcript(tmp_path / f"{SESSION}.jsonl", [("req_1", 100, 20), ("req_2", 200, 40)])))
    telemetry = [
        api_request(SESSION, 1, "req_2", cost=0.01, input_tokens=200, output_tokens=40),  # the transcript has it
        api_request(SESSION, 2, "req_3", cost=0.02, input_tokens=300, output_tokens=60),  # the transcript does not yet
    ]
    assert otel_daemon.receiver.send(logs_request(telemetry)).status == 200

    row = otel_daemon.report()["rows"][0]
    assert (row["session"], row["calls"], row["input_tokens"], row["output_tokens"]) == (SESSION, 3, 600, 120)
    assert (row["telemetry_calls"], row["usage_source"], row["project"]) == (1, "both", "/work/shop")
    usage = otel_daemon.call("usage", session=SESSION)
    assert (usage["calls"], usage["input_tokens"]) == (3, 600)

    # The transcript catches up: req_3 is telemetry's already, and counts no more.
    transcript(tmp_path / f"{SESSION}.jsonl", [("req_1", 100, 20), ("req_2", 200, 40), ("req_3", 300, 60)])
    toka("import", str(tmp_path / f"{SESSION}.jsonl"))
    assert otel_daemon.report()["totals"]["calls"] == 3


def test_requests_without_ids_are_matched_by_their_model_and_prompt(otel_daemon: OtelDaemon, tmp_path: Path) -> None:
    # Behind a gateway that returns no request id, the transcript, the telemetry or both go without.
    toka(
        "import", str(transcript(tmp_path / f"{SESSION}.jsonl", [(None, 100, 20), ("req_2", 200, 40), (None, 300, 60)]))
    )
    telemetry = [
        api_request(SESSION, 1, None, cost=0.01, input_tokens=100, output_tokens=20),
        api_request(SESSION, 2, None, cost=0.01, input_tokens=200, output_tokens=40),
        api_request(SESSION, 3, "req_3", cost=0.02, input_tokens=300, output_tokens=60),
        api_request(SESSION, 4, "req_4", cost=0.02, input_tokens=400, output_tokens=80),  # not in the transcript yet
    ]
    assert otel_daemon.receiver.send(logs_request(telemetry)).status == 200

    row = otel_daemon.report()["rows"][0]
    assert (row["calls"], row["input_tokens"], row["output_tokens"], row["telemetry_calls"]) == (4, 1000, 200, 1)


def test_a_telemetry_only_session_appears_in_the_report_with_its_tokens_and_cost(otel_daemon: OtelDaemon) -> None:
    request = api_request("solo", 1, "req_9", cost=0.5, input_tokens=100_000, output_tokens=0, cache_read_tokens=0)
    assert otel_daemon.receiver.send(logs_request([request])).status == 200

    row = otel_daemon.report()["rows"][0]
    assert (row["session"], row["source"], row["usage_source"], row["input_tokens"]) == (
        "solo",
        "claude-code",
        "telemetry",
        100_000,
    )
    assert row["cost_usd"] == 0.3  # claude-sonnet-4-5 input at $3 per million, from toka's table
    compare = otel_daemon.compare()["rows"][0]
    assert (compare["toka_cost_usd"], compare["agent_cost_usd"], compare["difference_pct"]) == (0.3, 0.5, -40.0)


def test_codex_rollout_and_telemetry_count_a_call_once(otel_daemon: OtelDaemon, tmp_path: Path) -> None:
    conversation = "019a7c2e-1111-7222-8333-444455556666"
    rollout = [
        {"timestamp": "2026-01-02T03:04:00.000Z", "type": "session_meta", "payload": {"id": conversation, "cwd": "/w"}},
        {"timestamp": "2026-01-02T03:04:05.000Z", "type": "turn_context", "payload": {"model": "gpt-5", "cwd": "/w"}},
        {"timestamp": "2026-01-02T03:04:06.000Z", "type": "event_msg", "payload": {"type": "token_count", "info": {
            "last_token_usage": {"input_tokens": 1500, "cached_input_tokens": 1024, "output_tokens": 77,
                                 "reasoning_output_tokens": 20, "total_tokens": 1577},
            "total_token_usage": {"input_tokens": 1500, "cached_input_tokens": 1024, "output_tokens": 77,
                                  "reasoning_output_tokens": 20, "total_tokens": 1577},
            "model_context_window": 272000}}},
    ]  # fmt: skip
    path = tmp_path / f"rollout-2026-01-02T03-04-00-{conversation}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in rollout))
    toka("import", str(path))
    completed = codex_record(
        "sse_event",
        conversation,
        "2026-01-02T03:04:06.100Z",
        model="gpt-5",
        input_token_count="1500",
        output_token_count="77",
        cached_token_count=1024,
        reasoning_token_count=20,
        tool_token_count="1577",
        **{"event.kind": "response.completed"},
    )
    assert otel_daemon.receiver.send(logs_request([completed], service="codex_exec"), "json").status == 200

    row = otel_daemon.report()["rows"][0]
    assert (row["session"], row["calls"], row["usage_source"], row["source"]) == (
        conversation,
        1,
        "transcript",
        "codex",
    )


def test_the_official_sdk_exporter_is_received(otel_daemon: OtelDaemon) -> None:
    from opentelemetry._logs import LogRecord
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor

    provider = LoggerProvider()
    provider.add_log_record_processor(
        BatchLogRecordProcessor(
            OTLPLogExporter(
                endpoint=otel_daemon.receiver.url + "/v1/logs",
                headers={"Authorization": f"Bearer {otel_daemon.receiver.token}"},
            )
        )
    )
    logger = provider.get_logger("com.anthropic.claude_code.events")
    for sequence, (tokens, cost) in enumerate([(1000, 0.125), (2000, 0.25), (3000, 0.375)]):
        attributes = {"event.name": "api_request", "session.id": "sdk", "event.sequence": sequence,
                      "model": "claude-sonnet-4-5", "input_tokens": tokens, "output_tokens": 10,
                      "request_id": f"req_{sequence}", "cost_usd": cost}  # fmt: skip
        logger.emit(LogRecord(body="claude_code.api_request", attributes=attributes))
    assert provider.force_flush(15_000)
    provider.shutdown()

    row = otel_daemon.report()["rows"][0]
    assert (row["session"], row["calls"], row["input_tokens"], row["output_tokens"]) == ("sdk", 3, 6000, 30)
    assert otel_daemon.compare()["totals"]["agent_cost_usd"] == 0.75
