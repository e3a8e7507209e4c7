"""`toka agent ...`: spawn, usage that moves an agent through its states, the handoff at the
critical point, manual transitions, and the errors that store nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from cli_support import assert_error, invoke, invoke_json
from transcripts import shared_or_skip

from daemon.client.sync import Client


def _spawn(*args: str) -> dict[str, Any]:
    agent: dict[str, Any] = invoke_json("agent", "spawn", "--model", "claude-sonnet-4-5", *args)
    return agent


def _usage(agent: str, context: int, exit_code: int = 0) -> dict[str, Any]:
    """One call whose prompt is ``context`` tokens (100 input, the rest read from the cache)."""
    return dict(
        invoke_json("agent", "usage", agent, "--input", "100", "--cache-read", str(context - 100), exit_code=exit_code)
    )


def _events(session: str, kind: str) -> list[dict[str, Any]]:
    with Client() as client:
        return list(client.iter_events(session=session, kinds=[kind]))


def test_spawn_gives_readable_versioned_ids_within_a_trace() -> None:
    first = _spawn("--type", "frontend", "--trace", "web")
    second = _spawn("--type", "frontend", "--trace", "web")
    other = _spawn("--type", "frontend", "--trace", "mobile")
    assert first["id"].startswith("frontend-v1-") and second["id"].startswith("frontend-v2-")
    assert other["id"].startswith("frontend-v1-")
    assert (first["state"], first["session"], first["trace"], first["window_source"]) == (
        "INITIALIZING",
        first["id"],
        "web",
        "table",
    )
    [spawn] = _events(first["id"], "agent.spawn")
    assert spawn["payload"]["type"] == "frontend" and spawn["payload"]["version"] == 1


def test_usage_moves_an_agent_to_warning_then_critical_and_back() -> None:
    agent = _spawn("--type", "backend")["id"]
    assert _usage(agent, 100_000)["state"] == "ACTIVE"
    assert _usage(agent, 150_000)["state"] == "WARNING"  # 75% of 200k
    assert _usage(agent, 185_000)["state"] == "CRITICAL"  # 92.5%
    assert _usage(agent, 60_000)["state"] == "ACTIVE"  # after a compaction
    changes = [(e["payload"]["from"], e["payload"]["to"]) for e in _events(agent, "lifecycle")]
    assert changes == [
        ("INITIALIZING", "ACTIVE"),
        ("ACTIVE", "WARNING"),
        ("WARNING", "CRITICAL"),
        ("CRITICAL", "ACTIVE"),
    ]


def test_thresholds_and_window_are_per_agent() -> None:
    agent = _spawn("--type", "tiny", "--window", "10000", "--warning", "50", "--critical", "60")["id"]
    shown = _usage(agent, 5_500)
    assert (shown["state"], shown["context_window"], shown["window_source"]) == ("WARNING", 10_000, "agent")
    usage = invoke_json("usage", agent)
    assert usage["thresholds"] == {"warning_pct": 50.0, "critical_pct": 60.0, "compress_pct": 75.0}
    assert usage["tokens_until"]["critical"] == 500 and usage["headroom_tokens"] == 4_500


def test_at_critical_the_handoff_policy_hands_the_work_to_a_successor() -> None:
    agent = _spawn("--type", "billing", "--trace", "pay", "--policy", "handoff")["id"]
    with Client() as client:
        client.record(agent, "message", {"role": "user", "text": "Build the billing API"}, agent=agent)
        client.note(agent, "decision", "Use Postgres", reason="already deployed")
        client.note(agent, "rejected", "SQLite", reason="no concurrent writers")
        todos = [{"content": "Write the invoice endpoint", "status": "in_progress", "activeForm": "Writing"}]
        client.record(agent, "tool.call", {"tool": "TodoWrite", "tool_use_id": "t1", "input": {"todos": todos}})
    _usage(agent, 160_000)
    ended = _usage(agent, 190_000)  # 95%
    assert (ended["state"], ended["reason"]) == ("TERMINATED", "CONTEXT_WINDOW_EXHAUSTED")
    changes = [e["payload"]["to"] for e in _events(agent, "lifecycle")]
    assert changes == ["WARNING", "CRITICAL", "HANDOFF_PENDING", "HANDOFF_COMPLETE", "TERMINATED"]
    [handoff] = invoke_json("handoff", "list", "--trace", "pay")["handoffs"]
    successor = invoke_json("agent", "show", handoff["successor"])
    assert successor["id"].startswith("billing-v2-") and successor["session"] != agent
    assert (successor["trace"], successor["predecessor"], successor["version"]) == ("pay", agent, 2)
    with Client() as client:
        first = next(client.iter_events(session=successor["session"]))
    assert first["kind"] == "agent.spawn" and first["parents"] == [handoff["id"]]
    prompt = first["payload"]["continuation"]
    for expected in ("Build the billing API", "Use Postgres", "SQLite", "Write the invoice endpoint"):
        assert expected in prompt
    assert invoke_json("handoff", "verify", handoff["id"])["ok"] is True


def test_the_sixth_handoff_of_a_trace_is_refused_and_the_agent_goes_to_error() -> None:
    agent = _spawn("--type", "loop", "--trace", "long", "--policy", "handoff")["id"]
    for _ in range(5):
        successor = _usage(agent, 190_000)["successor"]
        assert successor is not None
        agent = successor
    refused = _usage(agent, 190_000)
    assert refused["state"] == "ERROR"
    assert "handoff refused" in refused["detail"] and "lifecycle.max_handoffs" in refused["detail"]
    shown = invoke("agent", "show", agent)
    assert "handoff refused" in shown.stdout
    assert len(invoke_json("handoff", "list", "--trace", "long")["handoffs"]) == 5


def test_pause_resume_and_terminate() -> None:
    agent = _spawn("--type", "worker")["id"]
    _usage(agent, 160_000)
    assert invoke_json("agent", "pause", agent)["state"] == "PAUSED"
    assert _usage(agent, 190_000)["state"] == "PAUSED"  # usage is recorded, the state stays
    assert invoke_json("agent", "resume", agent)["state"] == "CRITICAL"  # what its fill calls for
    ended = invoke_json("agent", "terminate", agent, "--reason", "task_completed")
    assert (ended["state"], ended["reason"]) == ("TERMINATED", "TASK_COMPLETED")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("agent", "pause", "nobody-v1-0000"), 3, "no agent matches"),
        (("agent", "terminate", "AGENT", "--reason", "BORED"), 2, "unknown termination reason"),
        (("agent", "resume", "AGENT"), 6, "not PAUSED"),
        (("agent", "usage", "AGENT"), 2, "at least one token count"),
        (("agent", "usage", "AGENT", "--input", "200000000"), 2, "input_tokens must be a whole number"),
        (("agent", "spawn", "--type", "x", "--window", "0"), 2, "invalid value for '--window'"),
        (("agent", "spawn", "--type", "x", "--warning", "95"), 2, "must be below the critical one"),
        (("agent", "spawn", "--type", "x", "--policy", "panic"), 2, "unknown policy"),
        (("agent", "spawn", "--type", "no spaces"), 2, "an agent needs a type"),
    ],
)
def test_bad_requests_fail_clearly_and_store_nothing(args: tuple[str, ...], code: int, message: str) -> None:
    agent = _spawn("--type", "subject")["id"]
    with Client() as client:
        before = client.call("stats")["events"]
    result = invoke(*(agent if a == "AGENT" else a for a in args))
    assert result.exit_code == code, result.stderr
    assert message in result.stderr
    with Client() as client:
        assert client.call("stats")["events"] == before


def test_a_terminated_agent_cannot_be_paused() -> None:
    agent = _spawn("--type", "done")["id"]
    assert invoke("agent", "terminate", agent).exit_code == 0
    result = invoke("agent", "pause", agent)
    assert result.exit_code == 6
    assert_error(result.stderr, contains="is TERMINATED and cannot go to PAUSED")
    assert "none: it is final" in result.stderr


def test_agent_list_puts_agents_at_risk_first() -> None:
    calm = _spawn("--type", "calm")["id"]
    risky = _spawn("--type", "risky")["id"]
    _usage(calm, 20_000)
    _usage(risky, 185_000)
    listed = [a["id"] for a in invoke_json("agent", "list")["agents"]]
    assert listed.index(risky) < listed.index(calm)
    status = invoke_json("status")
    assert status["agents_at_risk"][0]["id"] == risky
    assert [a["id"] for a in invoke_json("usage")["agents"]][0] == risky


def test_agents_of_sessions_that_ended_are_not_at_risk() -> None:
    main = shared_or_skip("fixtures", "transcripts", "claude", "marot__8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
    assert invoke("config", "set", "lifecycle.warning_pct", "10").exit_code == 0
    assert invoke("import", str(main), str(main.with_suffix(""))).exit_code == 0  # it ended in February 2026
    ended = invoke_json("agent", "list")["agents"]
    assert {a["state"] for a in ended if a["id"].endswith("/main")} == {"WARNING"}  # its state stands
    live = {"model": "claude-sonnet-4-5", "input_tokens": 100, "cache_read_tokens": 49_900}
    assert invoke("record", "live", "usage", json.dumps(live), "--agent", "main").exit_code == 0
    assert [a["id"] for a in invoke_json("status")["agents_at_risk"]] == ["live/main"]
    assert "8463c716" not in invoke("status").stdout
    assert invoke("record", "live", "hook.session_end", '{"reason": "exit"}').exit_code == 0
    assert invoke_json("status")["agents_at_risk"] == []


def test_agent_list_shows_when_each_was_last_active_the_live_first() -> None:
    live = {"model": "claude-sonnet-4-5", "input_tokens": 100, "cache_read_tokens": 49_900}
    for session in ("gone", "here"):
        assert invoke("record", session, "usage", json.dumps(live), "--agent", "main").exit_code == 0
    assert invoke("record", "gone", "hook.session_end", '{"reason": "exit"}').exit_code == 0
    listed = invoke_json("agent", "list")["agents"]
    assert [(a["id"], a["state"], a["live"]) for a in listed] == [
        ("here/main", "ACTIVE", True),
        ("gone/main", "ENDED", False),
    ]
    assert all(a["last_active"] for a in listed)
    assert [a["id"] for a in invoke_json("agent", "list", "--live")["agents"]] == ["here/main"]
    table = invoke("agent", "list").stdout.splitlines()
    assert "last (UTC)" in table[0]
    assert table[1].startswith("here/main") and table[2].startswith("gone/main") and "ENDED" in table[2]
    shown = invoke("agent", "show", "gone/main").stdout
    assert "ENDED (SESSION_ENDED)" in shown and "session ended (exit)" in shown
