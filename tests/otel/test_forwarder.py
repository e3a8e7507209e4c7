"""The forwarder: with export.otlp.endpoint set, the daemon sends the log to a collector as it is
written. A collector that is down, then up, gets every span once; a daemon restarted while it
forwards resumes at its cursor, with no gap and no repeat; what it could not send shows in
`status` and `toka doctor`; a bad setting stops toka with one line and a hint."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from collector_support import Collector
from daemons import Spawned, Spawner, wait_for
from export_support import (
    EXAMPLE,
    EXAMPLE_SESSION,
    EXAMPLE_SPANS,
    SMALL_SPANS,
    append,
    assert_reports_totals,
    small_session,
    spans_of,
    toka,
)

# Long enough that a test sees a session before its agent spans go, short enough not to wait.
IDLE_S = "0.5"


@pytest.fixture
def collector() -> Iterator[Collector]:
    collector = Collector().start()
    yield collector
    collector.stop()


@pytest.fixture
def forwarding(spawn: Spawner, collector: Collector) -> Callable[..., Spawned]:
    def start(**env: str) -> Spawned:
        settings = {
            "TOKA_EXPORT_OTLP_ENDPOINT": collector.url,
            "TOKA_EXPORT_OTLP_SESSION_IDLE_S": IDLE_S,
            "TOKA_EXPORT_OTLP_RETRY_MAX_S": "0.2",
        }
        return spawn(env=settings | env)

    return start


def export_status(daemon: Spawned) -> dict[str, Any]:
    status: dict[str, Any] = daemon.status()["export"]
    return status


def test_the_log_is_forwarded_as_it_is_written(forwarding: Callable[..., Spawned], collector: Collector) -> None:
    daemon = forwarding()
    assert toka("import", str(EXAMPLE)).returncode == 0

    wait_for(lambda: len(collector.received()) == EXAMPLE_SPANS, "the example's spans arrived")

    spans = collector.received()
    assert collector.repeats() == {}
    assert_reports_totals(collector, EXAMPLE_SESSION)
    assert [s.name for s in spans][-1] == "invoke_agent main"  # the agent span once the session went quiet
    status = wait_for(lambda: (s := export_status(daemon))["state"] == "idle" and s, "the forwarder is idle")
    assert status["endpoint"] == f"{collector.url}/v1/traces"
    assert status["sent_spans"] == EXAMPLE_SPANS and status["behind"] == 0 and status["dropped_spans"] == 0
    assert status["open_sessions"] == 0 and status["last_error"] is None


def test_a_collector_down_then_up_gets_every_span_once(
    forwarding: Callable[..., Spawned], collector: Collector
) -> None:
    collector.stop()
    daemon = forwarding(TOKA_EXPORT_OTLP_QUEUE_EVENTS="16")  # the example's 23 events overflow it
    assert toka("import", str(EXAMPLE)).returncode == 0
    append(small_session("later"))
    down = wait_for(lambda: (s := export_status(daemon))["retries"] >= 2 and s, "the forwarder retried")
    assert down["state"] == "retrying" and "cannot reach" in down["last_error"]
    assert down["overflowed_events"] > 0 and down["sent_spans"] == 0

    collector.start()

    wait_for(lambda: len(collector.received()) == EXAMPLE_SPANS + SMALL_SPANS, "every span arrived")
    assert collector.repeats() == {}
    assert len(spans_of(collector, EXAMPLE_SESSION)) == EXAMPLE_SPANS
    assert_reports_totals(collector, EXAMPLE_SESSION, "later")
    status = wait_for(lambda: (s := export_status(daemon))["state"] == "idle" and s, "the forwarder caught up")
    assert status["last_error"] is None and status["behind"] == 0


def test_a_daemon_restarted_mid_forwarding_resumes_with_no_gap_and_no_repeat(
    forwarding: Callable[..., Spawned], collector: Collector
) -> None:
    first = forwarding()
    append(small_session("before"))
    wait_for(lambda: len(spans_of(collector, "before")) == SMALL_SPANS, "the first session was sent")
    collector.refuse_with = 503  # the collector refuses: what follows waits in the log
    append(small_session("during"))
    wait_for(lambda: export_status(first)["retries"] >= 1, "the forwarder is retrying")
    assert first.stop() == 0

    collector.refuse_with = None
    second = forwarding()
    append(small_session("after"))

    wait_for(lambda: len(collector.received()) == 3 * SMALL_SPANS, "all three sessions were sent")
    assert collector.repeats() == {}
    assert {s.attributes["gen_ai.conversation.id"] for s in collector.received()} == {"before", "during", "after"}
    assert_reports_totals(collector, "before", "during", "after")
    assert export_status(second)["sent_spans"] == 2 * SMALL_SPANS


def test_a_daemon_restarted_resends_nothing_already_sent(
    forwarding: Callable[..., Spawned], collector: Collector
) -> None:
    first = forwarding()
    assert toka("import", str(EXAMPLE)).returncode == 0
    wait_for(lambda: len(collector.received()) == EXAMPLE_SPANS, "the example was sent")
    wait_for(lambda: export_status(first)["open_sessions"] == 0, "its cursor moved past it")
    assert first.stop() == 0

    second = forwarding()
    append(small_session("next"))

    wait_for(lambda: len(spans_of(collector, "next")) == SMALL_SPANS, "the next session was sent")
    assert collector.repeats() == {}
    assert export_status(second)["sent_spans"] == SMALL_SPANS


def test_spans_the_collector_refuses_for_good_are_counted_in_status_and_doctor(
    forwarding: Callable[..., Spawned], collector: Collector
) -> None:
    collector.refuse_with = 400
    daemon = forwarding()
    append(small_session("refused"))

    status = wait_for(lambda: (s := export_status(daemon))["dropped_spans"] >= 3 and s, "the refusal was counted")
    assert status["sent_spans"] == 0

    doctor = toka("doctor", "--json")
    [check] = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "export"]
    assert check["status"] == "warning"
    assert "refused" in check["detail"] and collector.url in check["detail"]


def test_doctor_says_when_the_collector_cannot_be_reached(
    forwarding: Callable[..., Spawned], collector: Collector
) -> None:
    collector.stop()
    daemon = forwarding()
    append(small_session("waiting"))
    wait_for(lambda: export_status(daemon)["retries"] >= 1, "the forwarder is retrying")

    doctor = toka("doctor", "--json")

    [check] = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "export"]
    assert check["status"] == "warning" and "cannot reach" in check["detail"]
    assert "toka status" in check["fix"]


def test_without_an_endpoint_nothing_is_forwarded(daemon: Spawned) -> None:
    assert daemon.status()["export"] is None
    doctor = toka("doctor", "--json")
    [check] = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "export"]
    assert check["status"] == "ok"


@pytest.mark.parametrize(
    ("env", "message", "hint"),
    [
        ({"TOKA_EXPORT_OTLP_PROTOCOL": "grpc"},
         "error: export.otlp.protocol from env TOKA_EXPORT_OTLP_PROTOCOL: 'grpc' is not spoken", "hint: set it to"),
        ({"TOKA_EXPORT_OTLP_ENDPOINT": "collector:4318"},
         "error: export.otlp.endpoint from env TOKA_EXPORT_OTLP_ENDPOINT: 'collector:4318' is not an http",
         "hint: e.g. http://127.0.0.1:4318"),
        ({"TOKA_EXPORT_OTLP_HEADERS": "authorization"},
         "error: export.otlp.headers from env TOKA_EXPORT_OTLP_HEADERS: 'authorization' is not name=value",
         "hint: e.g. [export.otlp] headers"),
        ({"TOKA_EXPORT_OTLP_QUEUE_EVENTS": "1"},
         "error: export.otlp.queue_events from env TOKA_EXPORT_OTLP_QUEUE_EVENTS must be a whole number from 16",
         "hint: its default is 10000"),
    ],
)  # fmt: skip
def test_a_bad_setting_is_one_line_with_a_hint_and_exit_2(env: dict[str, str], message: str, hint: str) -> None:
    result = toka("status", env=env)

    assert result.returncode == 2
    error, shown_hint = result.stderr.splitlines()
    assert error.startswith(message) and shown_hint.startswith(hint), result.stderr


def test_config_show_hides_the_headers_values() -> None:
    result = toka("config", "show", "--json", env={"TOKA_EXPORT_OTLP_HEADERS": "authorization=Bearer%20s3cret"})

    assert result.returncode == 0, result.stderr
    assert "s3cret" not in result.stdout
    [row] = [r for r in json.loads(result.stdout)["settings"] if r["key"] == "export.otlp.headers"]
    assert row["value"] == {"authorization": "********"}
