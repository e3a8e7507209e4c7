"""Decoding as the agents write their bodies (shared/docs/agent-otel.md): Claude Code's JSON
int64 as numbers, Codex's as strings, enums as numbers or names; and mapping the names and
numbers that differ between the two and between versions."""

from __future__ import annotations

import json

import pytest
from otel_support import claude_record, logs_request

from daemon.otel.decode import decode
from daemon.otel.events import Rules, log_events
from daemon.otel.model import Refused

RULES = Rules(("email",), 100)


def body(records: list[dict[str, object]]) -> bytes:
    return json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]}).encode()


def test_int64_as_a_json_number_or_a_string_reads_the_same() -> None:
    attrs = [{"key": "event.name", "value": {"stringValue": "codex.sse_event"}},
             {"key": "conversation.id", "value": {"stringValue": "c"}},
             {"key": "event.kind", "value": {"stringValue": "response.completed"}}]  # fmt: skip
    as_number = [*attrs, {"key": "input_token_count", "value": {"intValue": 1500}}]
    as_string = [*attrs, {"key": "input_token_count", "value": {"intValue": "1500"}}]
    for record in ({"timeUnixNano": 0, "attributes": as_number}, {"timeUnixNano": "0", "attributes": as_string}):
        decoded = decode("logs", "application/json", body([record]))
        assert decoded.logs[0].attributes["input_token_count"] == 1500
        assert log_events(decoded.logs, RULES).events[1].payload["input_tokens"] == 1500


def test_numbers_sent_as_strings_count_as_numbers() -> None:
    old = claude_record("api_request", "s", 1, input_tokens="12", output_tokens="3", cost_usd="0.5", request_id="r")
    decoded = decode("logs", "application/x-protobuf", logs_request([old]).SerializeToString())
    usage = log_events(decoded.logs, RULES).events[1].payload
    assert (usage["input_tokens"], usage["output_tokens"], usage["cost_usd"]) == (12, 3, 0.5)


def test_cost_from_micros_when_cost_usd_is_missing() -> None:
    record = claude_record("api_request", "s", 1, cost_usd_micros=27100, request_id="r")
    decoded = decode("logs", "application/x-protobuf", logs_request([record]).SerializeToString())
    assert log_events(decoded.logs, RULES).events[1].payload["cost_usd"] == 0.0271


def test_records_without_an_event_name_are_left_out() -> None:
    debug = {"body": {"stringValue": "sse event: response.created"}, "attributes": []}
    mapped = log_events(decode("logs", "application/json", body([debug])).logs, RULES)
    assert (mapped.events, mapped.ignored) == ([], 1)


@pytest.mark.parametrize("severity", [9, "SEVERITY_NUMBER_INFO"])
def test_severity_as_a_number_or_a_name(severity: object) -> None:
    assert decode("logs", "application/json", body([{"severityNumber": severity}])).logs[0].severity == 9


def test_a_double_int_is_refused() -> None:
    with pytest.raises(Refused, match="must be an integer"):
        decode("logs", "application/json", body([{"timeUnixNano": 1.5}]))
