"""`toka memory ...` through the CLI: JSON values in and out, versions, pins, errors."""

from __future__ import annotations

import pytest
from cli_support import assert_error, invoke, invoke_json

from daemon.client.sync import Client


def test_set_get_list_history_and_rm() -> None:
    assert invoke_json("memory", "set", "session:s", "plan", '{"step": 1}', "--pin")["version"] == 1
    assert invoke("memory", "get", "session:s", "plan").stdout == '{"step": 1}\n'
    second = invoke_json("memory", "set", "session:s", "plan", "-", "--expect-version", "1", input='{"step": 2}')
    assert (second["version"], second["pinned"]) == (2, True)  # the pin stays unless --unpin
    listed = invoke_json("memory", "list", "session:s")["entries"]
    assert [(e["key"], e["value"], e["pinned"]) for e in listed] == [("plan", {"step": 2}, True)]
    changes = invoke_json("memory", "history", "session:s", "plan")["changes"]
    assert [c["value"] for c in changes] == [{"step": 1}, {"step": 2}]
    assert invoke_json("memory", "rm", "session:s", "plan") == {
        "scope": "session:s",
        "key": "plan",
        "version": 3,
        "deleted": True,
    }
    assert invoke("memory", "get", "session:s", "plan").exit_code == 3


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("memory", "set", "global", "k", "not json"), 2, "the value is not JSON"),
        (("memory", "set", "nowhere", "k", "1"), 2, "unknown scope"),
        (("memory", "set", "global", "k", "1", "--expect-version", "4"), 6, "is at version 0 (not set), not 4"),
        (("memory", "get", "global", "missing"), 3, "is not set"),
        (("memory", "rm", "global", "missing"), 3, "is not set"),
        (("memory", "set", "global", "k", "1", "--ttl", "1e308"), 2, "at most 315,360,000 (10 years)"),
        (("memory", "set", "global", "k", "1", "--ttl", "1e12"), 2, "at most 315,360,000 (10 years)"),
        (("memory", "set", "global", "k", "1", "--ttl", "inf"), 2, "ttl"),
        (("memory", "set", "global", "k", "1", "--ttl", "nan"), 2, "ttl"),
        (("memory", "set", "global", "k", "1", "--ttl", "-1"), 2, "ttl"),
        (("memory", "set", "global", "k", "1", "--ttl", "0"), 2, "more than 0"),
        (("memory", "set", "global", "k", "NaN"), 2, "NaN is not a JSON number"),
        (("memory", "set", "global", "k", '{"a": [1, -Infinity]}'), 2, "-Infinity is not a JSON number"),
        (("memory", "set", "global", "k", "1e400"), 2, "1e400 is not a finite number"),
    ],
)
def test_errors_store_nothing(args: tuple[str, ...], code: int, message: str) -> None:
    with Client() as client:
        before = client.call("stats")["events"]
    result = invoke(*args)
    assert result.exit_code == code, result.stderr
    assert_error(result.stderr, contains=message)
    with Client() as client:
        assert client.call("stats")["events"] == before


def test_status_reports_an_event_the_context_store_could_not_apply() -> None:
    payload = '{"scope": "global", "key": "far", "value": 1, "version": 1, "ttl": 1e308, "pinned": false}'
    seq = invoke_json("record", "toka.memory", "memory.set", payload)["events"][0]["seq"]  # past memory.set's checks
    assert invoke_json("memory", "set", "global", "near", "2")["version"] == 1  # writes go on
    status = invoke_json("status")["projections"]
    assert status["skipped"] == 1
    assert (status["recent"][0]["seq"], status["recent"][0]["projection"]) == (seq, "memory")
    shown = invoke("status").stdout
    assert f"1 event not applied, the last seq {seq} (memory.set)" in shown


def test_doctor_warns_of_an_event_the_tables_skipped_and_the_daemon_keeps_serving() -> None:
    checks = {c["name"]: c for c in invoke_json("doctor")["checks"]}
    assert checks["tables"]["status"] == "ok"
    payload = '{"scope": "global", "key": "far", "value": 1, "version": 1, "ttl": 1e12, "pinned": false}'
    seq = invoke_json("record", "toka.memory", "memory.set", payload)["events"][0]["seq"]
    doctor = invoke_json("doctor")  # a warning is not a problem: the exit code stays 0
    tables = next(c for c in doctor["checks"] if c["name"] == "tables")
    assert doctor["ok"] is True and tables["status"] == "warning", tables
    assert (
        tables["detail"].startswith("1 event could not be applied")
        and f"seq {seq} (memory.set, memory)" in tables["detail"]
    )
    assert tables["fix"].startswith("toka status --json")
