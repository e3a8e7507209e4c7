"""`toka export otel`: sessions sent once to a collector that decodes them with opentelemetry-proto.
A re-export is the same spans; the request spans' tokens and costs are `toka report`'s; payload
text goes only when asked, redacted; a bad endpoint or a collector that is not there is one error
line with a hint and its exit code."""

from __future__ import annotations

from pathlib import Path

import pytest
from collector_support import Collector, Received, usage_totals
from daemons import Spawned, Spawner
from export_support import (
    EXAMPLE,
    EXAMPLE_SESSION,
    EXAMPLE_SPANS,
    SMALL_SPANS,
    append,
    report_totals,
    small_session,
    toka,
    toka_json,
)
from transcripts import shared_or_skip

from daemon.export.spans import agent_span_id, trace_id


@pytest.fixture
def collector() -> Collector:
    collector = Collector().start()
    yield collector
    collector.stop()


def shape(spans: list[Received]) -> dict[str, Received]:
    return {span.span_id: span for span in spans}


def test_the_example_exported_twice_is_the_same_spans_with_the_reports_totals(
    daemon: Spawned, collector: Collector
) -> None:
    assert toka("import", str(EXAMPLE)).returncode == 0

    first = toka_json("export", "otel", EXAMPLE_SESSION, "--endpoint", collector.url)
    once = collector.received()
    second = toka_json("export", "otel", "--endpoint", collector.url)  # every session: the same one
    twice = collector.received()[len(once) :]

    assert set(first) == {
        "endpoint", "include_content", "sessions", "spans", "requests", "tool_calls", "agents", "span_events",
        "skipped_requests", "dropped", "posts", "bytes", "retries", "usage",
    }  # fmt: skip
    assert (first["requests"], first["tool_calls"], first["agents"], first["dropped"]) == (3, 7, 1, 0)
    assert first["spans"] == second["spans"] == len(once) == EXAMPLE_SPANS
    assert shape(once) == shape(twice)
    assert collector.paths == ["/v1/traces", "/v1/traces"]
    assert {span.trace_id for span in once} == {trace_id(EXAMPLE_SESSION).hex()}
    root = agent_span_id(EXAMPLE_SESSION, "main").hex()
    [main] = [span for span in once if span.parent_id == ""]
    assert main.span_id == root and main.name == "invoke_agent main"
    assert all(span.parent_id == root for span in once if span is not main)
    assert sorted(span.attributes["gen_ai.operation.name"] for span in once) == ["chat"] * 3 + ["execute_tool"] * 7 + [
        "invoke_agent"
    ]
    request = next(span for span in once if span.name == "chat claude-sonnet-4-5")
    assert request.attributes["gen_ai.provider.name"] == request.attributes["gen_ai.system"] == "anthropic"
    assert request.attributes["gen_ai.request.model"] == "claude-sonnet-4-5"
    assert request.start_ns < request.end_ns  # from the tool result it answered
    assert main.resource["service.name"] == "toka"
    totals = report_totals(EXAMPLE_SESSION)
    assert usage_totals(once) == totals
    assert first["usage"] == {name: totals[name] for name in first["usage"]}


def test_a_claude_code_transcript_with_subagents_gives_its_report_in_spans(
    daemon: Spawned, collector: Collector
) -> None:
    transcript = shared_or_skip(
        "fixtures", "transcripts", "claude", "marot__258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    )
    subagents = shared_or_skip("fixtures", "transcripts", "claude", "marot__258c7280-ae70-4798-800f-63464d01a85d")
    assert toka("import", str(transcript), str(subagents), timeout=300).returncode == 0
    [session] = [s["session"] for s in toka_json("sessions")["sessions"]]

    toka_json("export", "otel", session, "--endpoint", collector.url)
    once = collector.received()
    toka_json("export", "otel", session, "--endpoint", collector.url)

    assert shape(once) == shape(collector.received()[len(once) :])
    assert usage_totals(once) == report_totals(session)
    root = agent_span_id(session, "main").hex()
    agents = [span for span in once if span.attributes["gen_ai.operation.name"] == "invoke_agent"]
    assert len(agents) > 1, "the fixture's subagents are agents of their own"
    assert all(span.parent_id == root for span in agents if span.span_id != root)
    by_id = shape(once)
    assert all(span.parent_id in by_id for span in once if span.parent_id), "every parent was sent"


def test_a_codex_rollout_gives_its_report_in_spans(daemon: Spawned, collector: Collector) -> None:
    rollout = shared_or_skip("fixtures", "transcripts", "codex", "jazzyalex__stage0_codex_small.jsonl")
    assert toka("import", str(rollout)).returncode == 0
    [session] = [s["session"] for s in toka_json("sessions")["sessions"]]

    toka_json("export", "otel", "--endpoint", collector.url)

    spans = collector.received()
    assert usage_totals(spans) == report_totals(session)
    assert {s.attributes["gen_ai.provider.name"] for s in spans if s.attributes["gen_ai.operation.name"] == "chat"} == {
        "openai"
    }


def test_a_request_reported_by_transcript_and_telemetry_is_one_span(daemon: Spawned, collector: Collector) -> None:
    events = small_session("both")
    telemetry = dict(events[1], ts="2026-02-01T10:00:03.500000Z")
    telemetry["payload"] = dict(events[1]["payload"], origin="telemetry", cost_usd=0.01)
    append([*events, telemetry])

    summary = toka_json("export", "otel", "both", "--endpoint", collector.url)

    assert summary["skipped_requests"] == 1
    assert summary["spans"] == SMALL_SPANS
    assert usage_totals(collector.received()) == report_totals("both")


def test_payload_text_is_sent_only_when_asked_and_then_redacted(daemon: Spawned, collector: Collector) -> None:
    secret = "alice@example.com"
    append(small_session("private", secret=secret))

    toka_json("export", "otel", "private", "--endpoint", collector.url)
    bare = collector.received()
    toka_json("export", "otel", "private", "--endpoint", collector.url, "--include-content")
    full = collector.received()[len(bare) :]

    assert secret not in repr(bare) and "fix it" not in repr(bare)
    assert "gen_ai.tool.call.arguments" not in repr(bare)
    [tool] = [span for span in full if span.name == "execute_tool Bash"]
    assert tool.attributes["gen_ai.tool.call.arguments"] == '{"command": "echo [redacted:email]"}'
    assert tool.attributes["gen_ai.tool.call.result"] == "[redacted:email] ok"
    [main] = [span for span in full if span.parent_id == ""]
    assert (
        "toka.message",
        {"toka.message.role": "user", "toka.message.text": "fix it [redacted:email]"},
    ) in main.events
    assert secret not in repr(full)


def test_headers_are_sent_and_since_keeps_to_its_window(daemon: Spawned, collector: Collector) -> None:
    append(small_session("windowed"))

    summary = toka_json(
        "export", "otel", "--endpoint", collector.url, "--header", "authorization=Bearer k1",
        "--since", "2026-02-01T10:00:05Z",
    )  # fmt: skip

    assert collector.headers[0]["authorization"] == "Bearer k1"
    assert summary["requests"] == 1 and summary["tool_calls"] == 0  # the tool call was made before
    assert sorted(span.name for span in collector.received()) == ["chat claude-sonnet-4-5", "invoke_agent main"]


@pytest.mark.parametrize(
    ("args", "message", "hint"),
    [
        (["--endpoint", "localhost:4318"], "error: bad endpoint: 'localhost:4318' is not an http:// or https:// URL",
         "hint: e.g. http://127.0.0.1:4318"),
        (["--endpoint", "http://127.0.0.1:4318", "--header", "nonsense"],
         "error: --header 'nonsense' is not NAME=VALUE", "hint: e.g. --header"),
        ([], "error: no collector to export to", "hint: give --endpoint URL"),
    ],
)  # fmt: skip
def test_a_bad_endpoint_is_one_line_with_a_hint_and_exit_2(
    daemon: Spawned, args: list[str], message: str, hint: str
) -> None:
    result = toka("export", "otel", *args)

    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith(message) and lines[1].startswith(hint), result.stderr
    assert result.stdout == ""


def test_a_collector_that_is_not_there_fails_with_exit_1_and_says_what_was_sent(daemon: Spawned) -> None:
    down = Collector().start()
    down.stop()  # a port nothing listens on
    append(small_session("unsent"))

    result = toka("export", "otel", "--endpoint", down.url)

    assert result.returncode == 1
    error, hint = result.stderr.splitlines()
    assert error.startswith(f"error: cannot reach {down.url}/v1/traces")
    assert error.endswith("Connection refused (0 spans were sent before)")
    assert hint.startswith("hint: check that the collector runs")


def test_the_endpoint_and_headers_of_the_config_are_the_default(
    spawn: Spawner, collector: Collector, toka_home: Path
) -> None:
    (toka_home / "config.toml").write_text(
        f'[export.otlp]\nendpoint = "{collector.url}"\nheaders = {{ "x-api-key" = "k2" }}\n'
        "session_idle_s = 3600\n"  # the forwarder sends nothing of its own here: the session is new to it
    )
    spawn()
    append(small_session("configured"))

    summary = toka_json("export", "otel", "configured")

    assert summary["spans"] == SMALL_SPANS
    assert summary["endpoint"] == f"{collector.url}/v1/traces"
    assert {headers["x-api-key"] for headers in collector.headers} == {"k2"}
