"""Naming sessions and agents: every command that takes a session or an agent reads the name the
same way (daemon/agents/refs.py). A session, or a unique prefix of one, names its main agent;
``SESSION/NAME`` names one agent of it; an ambiguous name is an error whose hint lists the
candidates. Checked on a real Claude Code session with two subagents (one of them the agent that
compacted it)."""

from __future__ import annotations

import json
from typing import Any

from cli_support import assert_error, invoke, stderr_lines
from transcripts import shared_or_skip

SESSION = "8463c716-a2ea-4c14-9efa-87158ebd9f20"
PREFIX = SESSION[:8]
MAIN = f"{SESSION}/main"
SUBAGENT = f"{SESSION}/a7be2f0"
COMPACTOR = f"{SESSION}/acompact-f46190"


def import_session() -> None:
    folder = shared_or_skip("fixtures", "transcripts", "claude", f"marot__{SESSION}")
    result = invoke("import", str(folder.with_suffix(".jsonl")), str(folder), "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["sessions"] == [SESSION]


def ok_json(*args: str) -> Any:
    result = invoke(*args)
    assert result.exit_code == 0, (args, result.stderr)
    return json.loads(result.stdout)


def test_a_session_prefix_names_its_main_agent_in_every_command_that_takes_an_agent() -> None:
    import_session()
    assert ok_json("compress", PREFIX, "--dry-run", "--json")["agent"] == MAIN
    assert ok_json("handoff", "create", PREFIX, "--json")["document"]["subject"]["agent"] == MAIN
    assert ok_json("agent", "show", PREFIX, "--json")["id"] == MAIN
    assert ok_json("usage", PREFIX, "--json")["agent"] == MAIN
    assert ok_json("context", PREFIX, "--format", "json")["agent"] == MAIN


def test_session_prefix_slash_name_names_one_agent_of_it() -> None:
    import_session()
    assert ok_json("agent", "show", f"{PREFIX}/main", "--json")["id"] == MAIN
    assert ok_json("agent", "show", f"{PREFIX}/acompact", "--json")["id"] == COMPACTOR  # a prefix of the name
    assert ok_json("usage", f"{PREFIX}/a7be2f0", "--json")["agent"] == SUBAGENT
    assert ok_json("handoff", "create", f"{PREFIX}/a7be2f0", "--json")["document"]["subject"]["agent"] == SUBAGENT
    assert ok_json("compress", f"{PREFIX}/a7be2f0", "--dry-run", "--json")["agent"] == SUBAGENT
    assert ok_json("context", f"{PREFIX}/a7be2f0", "--format", "json")["agent"] == SUBAGENT


def test_every_command_that_takes_a_session_takes_its_prefix() -> None:
    import_session()
    assert ok_json("show", PREFIX, "--json")["session"] == SESSION
    assert ok_json("verify", PREFIX, "--json")["session"] == SESSION
    assert ok_json("recall", "tmux", "--session", PREFIX, "--json")["session"] == SESSION
    assert {h["session"] for h in ok_json("search", "tmux", "--session", PREFIX, "--json")["hits"]} == {SESSION}
    pruned = ok_json("prune", "--before", "2099-01-01", "--session", PREFIX, "--dry-run", "--json")["sessions"]
    assert [p["session"] for p in pruned] == [SESSION]
    for args in (("events", PREFIX, "-n", "1"), ("replay", PREFIX, "--to", "1"), ("export", PREFIX)):
        result = invoke(*args, "--json") if args[0] != "export" else invoke(*args)
        assert result.exit_code == 0, (args, result.stderr)
        assert json.loads(result.stdout.splitlines()[0])["session"] == SESSION
    # An agent names its session where a session is asked for.
    assert ok_json("show", f"{PREFIX}/a7be2f0", "--json")["session"] == SESSION


def test_a_note_given_a_prefix_goes_into_that_session_not_a_new_one() -> None:
    import_session()
    assert invoke("note", PREFIX, "decision", "keep the tmux hook").exit_code == 0
    assert invoke("note", f"{PREFIX}/a7be2f0", "assumption", "the tests pass").exit_code == 0
    assert [s["session"] for s in ok_json("sessions", "--json")["sessions"]] == [SESSION]
    notes = [json.loads(line) for line in invoke("events", SESSION, "-k", "note.*", "--json").stdout.splitlines()]
    assert [(n["kind"], n["agent"]) for n in notes] == [("note.decision", "main"), ("note.assumption", "a7be2f0")]
    handoff = ok_json("handoff", "create", PREFIX, "--json")["document"]
    assert [d["text"] for d in handoff["decisions"]] == ["keep the tmux hook"]
    assert handoff["assumptions"] == []  # the subagent's note is the subagent's


def test_an_ambiguous_name_lists_the_candidates_in_its_hint() -> None:
    for session in ("run-a", "run-b"):
        assert invoke("record", session, "usage", '{"input_tokens": 10}').exit_code == 0
    for args in (("usage", "run"), ("handoff", "create", "run"), ("agent", "show", "run"), ("show", "run")):
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.stdout, result.stderr)
        assert_error(result.stderr, contains="'run' is ambiguous")
        assert stderr_lines(result.stderr)[1] == "hint: it could be run-a or run-b; give more of the name"


def test_an_unknown_agent_of_a_known_session_names_the_agents_it_has() -> None:
    import_session()
    result = invoke("agent", "show", f"{PREFIX}/nobody")
    assert result.exit_code == 3
    assert_error(result.stderr, contains=f"session {SESSION} has no agent 'nobody'")
    assert stderr_lines(result.stderr)[1] == "hint: its agents: main, a7be2f0, acompact-f46190"


def test_a_spawned_agent_is_named_by_its_id_its_session_or_a_prefix_of_either() -> None:
    agent = ok_json("agent", "spawn", "--type", "billing", "--model", "claude-sonnet-4-5", "--json")["id"]
    shared = ok_json("agent", "spawn", "--type", "docs", "--session", "team-room", "--json")["id"]
    prefix = agent[: len("billing-v1")]
    assert ok_json("agent", "show", prefix, "--json")["id"] == agent  # its session is its own: one agent
    assert ok_json("usage", prefix, "--json")["agent"] == agent
    assert ok_json("note", prefix, "decision", "invoice monthly", "--json")["agent"] == agent
    assert ok_json("show", prefix, "--json")["session"] == agent
    assert ok_json("agent", "show", "docs", "--json")["id"] == shared
    assert ok_json("show", "docs", "--json")["session"] == "team-room"  # an agent names its session
    assert ok_json("agent", "show", f"team/{shared}", "--json")["id"] == shared
