"""A handoff, a working context, a compression and a usage document are each about one agent,
and fold over that agent's events only: a subagent's prompt and answer (here, the agent that
compacted a real Claude Code session) never stand in for the main agent's, and each document
says which agent it is for."""

from __future__ import annotations

import json
from typing import Any

from cli_support import invoke
from transcripts import raw_records, shared_or_skip

SESSION = "8463c716-a2ea-4c14-9efa-87158ebd9f20"
MAIN = f"{SESSION}/main"
COMPACTOR = "acompact-f46190"
SUBAGENT = "a7be2f0"
CONTEXT_KINDS = ("message", "tool.call", "tool.result", "compaction", "compaction.summary")


def import_session() -> list[dict[str, Any]]:
    """Import the session with its subagents; its events."""
    folder = shared_or_skip("fixtures", "transcripts", "claude", f"marot__{SESSION}")
    result = invoke("import", str(folder.with_suffix(".jsonl")), str(folder), "--json")
    assert result.exit_code == 0, result.stderr
    listed = invoke("events", SESSION, "--json")
    assert listed.exit_code == 0, listed.stderr
    return [json.loads(line) for line in listed.stdout.splitlines()]


def first_prompt(agent: str) -> str:
    path = shared_or_skip("fixtures", "transcripts", "claude", f"marot__{SESSION}", "subagents", f"agent-{agent}.jsonl")
    first = raw_records(path)[0]
    assert first["type"] == "user" and isinstance(first["message"]["content"], str)
    return str(first["message"]["content"])


def ok_json(*args: str) -> Any:
    result = invoke(*args)
    assert result.exit_code == 0, (args, result.stderr)
    return json.loads(result.stdout)


def test_the_main_agents_handoff_cites_its_own_request_and_message_not_the_compactors() -> None:
    agents = {e["id"]: e["agent"] for e in import_session()}
    document = ok_json("handoff", "create", SESSION, "--json")["document"]
    request, status = document["task"]["request"], document["task"]["status"]
    assert (agents[request["event"]], agents[status["event"]]) == ("main", "main")
    assert not first_prompt(COMPACTOR).startswith(request["text"][:200])
    assert document["subject"]["agent"] == MAIN
    assert document["footer"]["events"] == sum(1 for agent in agents.values() if agent == "main")


def test_a_subagents_handoff_is_built_from_the_subagent() -> None:
    agents = {e["id"]: e["agent"] for e in import_session()}
    document = ok_json("handoff", "create", f"{SESSION}/{SUBAGENT}", "--json")["document"]
    assert document["subject"]["agent"] == f"{SESSION}/{SUBAGENT}"
    assert document["task"]["request"]["text"][:200] == first_prompt(SUBAGENT)[:200]
    cited = {ref["event"] for ref in document["references"]}
    assert cited and {agents[event] for event in cited} == {SUBAGENT}
    assert document["usage"]["agent"] == SUBAGENT  # its own calls, not the session's


def test_the_working_context_of_the_main_agent_holds_its_events_only() -> None:
    events = {e["seq"]: e for e in import_session()}
    context = ok_json("context", SESSION, "--format", "json")
    assert context["agent"] == MAIN
    seqs = [item["seq"] for item in context["included"] if item["seq"] is not None]
    assert seqs and {events[seq]["agent"] for seq in seqs} == {"main"}
    assert not context["messages"][-1]["content"].startswith(first_prompt(COMPACTOR)[:60])
    compactor = ok_json("context", f"{SESSION}/{COMPACTOR}", "--format", "json")
    assert {events[i["seq"]]["agent"] for i in compactor["included"] if i["seq"] is not None} == {COMPACTOR}
    text = invoke("context", SESSION, "--format", "text")
    assert text.exit_code == 0 and f"context of {MAIN}" in text.stderr


def test_a_compression_covers_the_agents_own_events() -> None:
    events = import_session()
    result = ok_json("compress", SESSION, "--target", "1", "--dry-run", "--json")  # a range over most of it
    assert result["agent"] == MAIN
    in_range = [
        e
        for e in events
        if result["first_seq"] <= e["seq"] <= result["last_seq"]
        and (e["kind"] in CONTEXT_KINDS or e["kind"].startswith("note."))
    ]
    assert result["events_in_range"] == sum(1 for e in in_range if e["agent"] == "main")
    by_seq = {e["seq"]: e for e in events}
    assert {by_seq[seq]["agent"] for seq in (result["first_seq"], result["last_seq"], *result["kept_seqs"])} == {"main"}
    assert invoke("compress", SESSION, "--dry-run").stdout.splitlines()[0].split() == ["agent", MAIN]


def test_usage_says_whose_figures_it_gives() -> None:
    events = import_session()
    usage = ok_json("usage", f"{SESSION}/{COMPACTOR}", "--json")
    calls = [e for e in events if e["kind"] == "usage" and e["agent"] == COMPACTOR]
    assert (usage["agent"], usage["calls"]) == (f"{SESSION}/{COMPACTOR}", len(calls))
    assert usage["output_tokens"] == sum(e["payload"].get("output_tokens", 0) for e in calls)
    main = ok_json("usage", SESSION, "--json")
    assert main["agent"] == MAIN and main["session"] == SESSION
    assert invoke("usage", SESSION).stdout.splitlines()[0].split() == ["agent", MAIN]
