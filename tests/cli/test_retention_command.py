"""`toka prune` and `toka gc` against a real daemon: what goes, what stays, what is skipped."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cli_support import EXAMPLE, EXAMPLE_SESSION, invoke, invoke_json, toka

from daemon.client.sync import Client

OLD = "2026-01-01T00:00:00Z"
CUT = "2026-02-01T00:00:00Z"
NEW = "2026-03-01T00:00:00Z"


def _events(session: str) -> list[dict[str, Any]]:
    result = invoke("events", session, "--json")
    assert result.exit_code == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_prune_dry_run_then_prune_then_gc_on_the_example_session() -> None:
    assert invoke("import", str(EXAMPLE)).exit_code == 0
    with Client() as client:  # a payload large enough to be kept in blobs, for gc to collect once pruned
        client.record(EXAMPLE_SESSION, "tool.result", {"text": "line of tool output\n" * 100}, ts=OLD)
    events = len(_events(EXAMPLE_SESSION))

    dry = invoke_json("prune", "--keep-days", "0", "--dry-run")
    assert dry["dry_run"] is True and dry["skipped"] == [] and dry["events"] == events
    [planned] = dry["sessions"]
    assert (planned["session"], planned["events"], planned["first_seq"], planned["checkpoint"]) == (
        EXAMPLE_SESSION,
        events,
        1,
        None,
    )
    assert sum(planned["kinds"].values()) == events
    assert len(_events(EXAMPLE_SESSION)) == events  # a dry run changes nothing

    done = invoke_json("prune", "--keep-days", "0")
    [pruned] = done["sessions"]
    assert {k: v for k, v in pruned.items() if k != "checkpoint"} == {
        k: v for k, v in planned.items() if k != "checkpoint"
    }
    [checkpoint] = _events(EXAMPLE_SESSION)
    assert (checkpoint["kind"], checkpoint["id"], checkpoint["payload"]["events"]) == (
        "checkpoint",
        pruned["checkpoint"],
        events,
    )
    assert invoke("verify").exit_code == 0
    again = invoke_json("import", str(EXAMPLE))
    assert again["created"] == 0  # pruned events are not imported again

    dry_gc = invoke_json("gc", "--dry-run")
    assert dry_gc["blobs"] >= 1 and dry_gc["dry_run"] is True and dry_gc["vacuumed"] is False
    collected = invoke_json("gc", "--vacuum")
    assert (collected["blobs"], collected["bytes"]) == (dry_gc["blobs"], dry_gc["bytes"])
    assert collected["vacuumed"] is True
    assert 0 < collected["disk_bytes_after"] <= collected["disk_bytes_before"]
    assert invoke_json("gc")["blobs"] == 0
    assert invoke("verify").exit_code == 0


def test_only_old_events_and_only_the_named_session_go() -> None:
    with Client() as client:
        for session in ("a", "b"):
            for ts in (OLD, OLD, NEW):
                client.record(session, "message", {"text": f"{session} at {ts}"}, ts=ts)
    result = invoke_json("prune", "--before", CUT, "--session", "a")
    assert [(s["session"], s["events"]) for s in result["sessions"]] == [("a", 2)]
    assert [e["kind"] for e in _events("a")] == ["checkpoint", "message"]
    assert len(_events("b")) == 3
    assert invoke_json("prune", "--before", CUT, "--session", "a")["sessions"] == []  # nothing old is left


def test_toka_state_and_live_spawned_agents_are_skipped_with_the_reason() -> None:
    assert invoke("memory", "set", "global", "theme", '"dark"').exit_code == 0
    agent = invoke_json("agent", "spawn", "--type", "frontend")
    result = invoke_json("prune", "--keep-days", "0")
    reasons = {s["session"]: s["reason"] for s in result["skipped"]}
    assert "its projections need every event" in reasons["toka.memory"]
    assert f"agent {agent['id']} is {agent['state']}" in reasons[agent["session"]]
    assert invoke_json("memory", "get", "global", "theme")["value"] == "dark"

    assert invoke("agent", "terminate", agent["id"], "--reason", "TASK_COMPLETED").exit_code == 0
    after = invoke_json("prune", "--keep-days", "0")
    assert agent["session"] in [s["session"] for s in after["sessions"]]


def test_gc_keeps_payloads_a_compression_summary_cites() -> None:
    big = {"text": "x" * 5000}
    with Client() as client:
        cited = client.call("events.get", id=client.record("work", "tool.result", big, ts=OLD)["id"])
        client.record("work", "message", {"text": "later"}, ts=NEW)
        elided = [{"digest": cited["digest"], "size": 5012, "kind": "tool.result", "seq": cited["seq"]}]
        client.record("summaries", "compression", {"summary": "[blob ...]", "elided": elided}, ts=NEW)
    invoke_json("prune", "--before", CUT, "--session", "work")

    collected = invoke_json("gc")

    assert collected["cited"] == 1 and collected["blobs"] == 0
    shown = toka("blob", "show", cited["digest"])
    assert shown.returncode == 0 and "xxxx" in shown.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give one of --before DATE or --keep-days N"),
        (("--before", CUT, "--keep-days", "3"), "give one of --before DATE or --keep-days N"),
        (("--before", "next tuesday"), "cannot read --before 'next tuesday' as a time"),
        (("--keep-days", "-1"), "invalid value"),
    ],
)
def test_prune_without_one_cut_off_is_a_usage_error(args: tuple[str, ...], message: str) -> None:
    result = invoke("prune", *args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_prune_of_an_unknown_session_is_not_found() -> None:
    result = invoke("prune", "--keep-days", "1", "--session", "nobody")
    assert result.exit_code == 3
    assert "nobody" in result.stderr


def test_prune_and_gc_print_for_people() -> None:
    with Client() as client:
        client.record("talk", "message", {"text": "old " * 300}, ts=OLD)  # large: its payload is in blobs
    dry = invoke("prune", "--before", CUT, "--dry-run")
    assert dry.exit_code == 0 and "would prune 1 events in 1 session" in dry.stdout
    assert "talk" in dry.stdout and "2026-01-01 00:00:00" in dry.stdout
    done = invoke("prune", "--before", CUT)
    assert "pruned 1 events in 1 session" in done.stdout and "toka gc" in done.stdout
    nothing = invoke("prune", "--before", CUT)
    assert "nothing older than 2026-02-01 00:00:00 to prune" in nothing.stdout
    collected = invoke("gc")
    assert collected.exit_code == 0 and "deleted 1 payloads" in collected.stdout


def test_prune_reports_its_progress_session_by_session() -> None:
    seen: list[tuple[int, int]] = []
    with Client() as client:
        for session in ("a", "b", "c"):
            client.record(session, "message", {"text": "old"}, ts=OLD)
        result = client.call("log.prune", lambda done, total: seen.append((done, total)), before=CUT, dry_run=True)
    assert [s["session"] for s in result["sessions"]] == ["a", "b", "c"]
    assert seen == [(1, 3), (2, 3), (3, 3)]
