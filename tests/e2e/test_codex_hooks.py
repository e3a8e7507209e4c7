"""`toka integrate codex` alone, then the real Codex: its hooks run trusted, record the session live,
and give the agent the handoff of the folder's previous session at its start."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_clis import AgentCli, codex_env, logged, run, toka, toka_json
from daemons import Spawned, wait_for
from fake_model import FakeModel, Reply, Text, ToolCall, Usage
from test_codex_agent import write_config

pytestmark = pytest.mark.e2e

FIRST = Usage(input=1000, output=50)
SECOND = Usage(input=1200, output=30)
PROMPT = "what port does the build use?"
DECISION = "The build server listens on port 8421, not 8080"


def integrated(codex: AgentCli, model: FakeModel, home: Path) -> dict[str, str]:
    """The test's provider config, the user's own (untrusted) hook, then `toka integrate codex`
    and nothing else: the environment to run Codex in."""
    write_config(home, model.url)
    mine = {"type": "command", "command": f"touch {home / 'untrusted-hook-ran'}"}
    (home / ".codex" / "hooks.json").write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [mine]}]}}))
    env = codex_env(home)
    toka("integrate", "codex", env={"HOME": str(home), "CODEX_HOME": env["CODEX_HOME"]})
    return env


def thread_of(home: Path) -> str:
    [rollout] = (home / ".codex" / "sessions").glob("*/*/*/rollout-*.jsonl")
    session: str = json.loads(rollout.read_text().splitlines()[0])["payload"]["id"]
    return session


def events(session: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in toka("events", session, "--json").stdout.splitlines()]


def test_codex_runs_tokas_trusted_hooks_and_the_session_is_logged_live(
    codex: AgentCli, model: FakeModel, agent_home: Path, daemon: Spawned
) -> None:
    env = integrated(codex, model, agent_home)
    call = ToolCall("exec_command", {"cmd": "cat notes.txt"})
    model.script(Reply((call,), FIRST), Reply((Text("Port 8421."),), SECOND), api="openai")
    run([str(codex.path), "exec", "--skip-git-repo-check", PROMPT], env, agent_home / "project")

    session = thread_of(agent_home)
    wait_for(lambda: logged(daemon, session, "hook.session_end"), "Codex's SessionEnd hook reached the daemon")
    hooks = [event for event in events(session) if event["kind"].startswith("hook.")]
    kinds = [event["kind"] for event in hooks]
    # Each once, in the order Codex ran them; notify's own record of the turn besides.
    assert [kind for kind in kinds if kind != "hook.agent_turn_complete"] == [
        "hook.session_start",
        "hook.user_prompt_submit",
        "hook.pre_tool_use",
        "hook.post_tool_use",
        "hook.stop",
        "hook.session_end",
    ]
    assert kinds.count("hook.agent_turn_complete") == 1
    by_kind = {event["kind"]: event for event in hooks}
    start, prompt = by_kind["hook.session_start"], by_kind["hook.user_prompt_submit"]
    assert (start["payload"]["source"], start["payload"]["cwd"]) == ("startup", str(agent_home / "project"))
    assert prompt["payload"]["prompt"] == PROMPT
    pre, post = by_kind["hook.pre_tool_use"], by_kind["hook.post_tool_use"]
    assert pre["payload"]["tool_use_id"] == post["payload"]["tool_use_id"] == call.call_id
    assert pre["key"] == f"hook.pre_tool_use:{call.call_id}"
    assert "cat notes.txt" in json.dumps(pre["payload"]["tool_input"])
    assert "8421" in json.dumps(post["payload"]["tool_response"])
    # toka trusted its own hooks only: the user's hook, never approved in Codex, did not run.
    assert not (agent_home / "untrusted-hook-ran").exists()


def test_codex_is_given_the_handoff_of_the_folders_previous_session(
    codex: AgentCli, model: FakeModel, agent_home: Path, daemon: Spawned
) -> None:
    project = str(agent_home / "project")
    start = {"session_id": "earlier", "hook_event_name": "SessionStart", "source": "startup", "cwd": project}
    toka("record", "earlier", "hook.session_start", json.dumps(start))
    ask = {"session_id": "earlier", "hook_event_name": "UserPromptSubmit", "prompt": "set up the build", "cwd": project}
    toka("record", "earlier", "hook.user_prompt_submit", json.dumps(ask))
    toka("note", "earlier", "decision", DECISION)
    handoff = toka_json("handoff", "create", "earlier")

    env = integrated(codex, model, agent_home)
    model.script(Reply((Text("Port 8421, as decided."),), FIRST), api="openai")
    run([str(codex.path), "exec", "--skip-git-repo-check", PROMPT], env, agent_home / "project")

    [turn] = model.agent_turns("/v1/responses")
    assert DECISION in json.dumps(turn.body), "the SessionStart hook's additionalContext did not reach the model"
    session = thread_of(agent_home)
    [given] = [event for event in events(session) if event["kind"] == "context.injected"]
    assert given["payload"]["why"] == "handoff" and given["payload"]["from_session"] == "earlier"
    assert given["payload"]["handed_on"] == handoff["id"] and DECISION in given["payload"]["text"]
