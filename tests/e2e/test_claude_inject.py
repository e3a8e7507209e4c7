"""What toka gives the real Claude Code through its hooks (docs/injection.md), read in the
requests Claude Code sends the fake model: a handoff at the next session's start, the to-dos after
a /compact, the CRITICAL notice on the next prompt, and nothing with TOKA_INJECT=0."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from agent_clis import TOKA, AgentCli, claude_env, logged, run, toka, toka_json
from daemons import Spawned, Spawner, wait_for
from fake_model import FakeModel, Reply, Text, Usage

from daemon.paths import resolve_paths

pytestmark = pytest.mark.e2e

DECISION = "Persist the job queue in Redis streams rather than RabbitMQ"
TODO = "Move the retry worker onto the new queue"
# A model whose window is 200k tokens (today's default model has 1M).
SONNET = ("--model", "claude-sonnet-4-5-20250929")


def hook(payload: dict[str, Any]) -> None:
    """One hook payload through the real `toka hook claude-code`, as Claude Code would send it."""
    done = subprocess.run([str(TOKA), "hook", "claude-code"], input=json.dumps(payload).encode(), timeout=30)
    assert done.returncode == 0


def handed_off(session: str, project: Path) -> str:
    """A session of ``project`` that decided something and was handed off; its handoff's id."""
    hook({"session_id": session, "hook_event_name": "SessionStart", "source": "startup", "cwd": str(project)})
    toka("record", session, "message", json.dumps({"role": "user", "text": "Move the jobs off cron."}))
    toka("note", session, "decision", DECISION)
    made: str = toka_json("handoff", "create", session)["id"]
    return made


def sent(model: FakeModel) -> str:
    """Every agent turn Claude Code sent the model, as one text to search."""
    return "\n".join(json.dumps(request.body) for request in model.agent_turns())


def turn(
    cli: AgentCli, prompt: str, session: str, env: dict[str, str], cwd: Path, resume: bool = False, *model: str
) -> None:
    which = "--resume" if resume else "--session-id"
    run([str(cli.path), "-p", prompt, "--allowedTools", "Read", which, session, *model], env, cwd)


def test_the_next_session_in_the_folder_starts_from_the_handoff(
    claude: AgentCli, model: FakeModel, agent_home: Path, daemon: Spawned
) -> None:
    project = agent_home / "project"
    handoff = handed_off("earlier-session", project)
    toka("integrate", "claude-code", env={"HOME": str(agent_home)})
    model.script(Reply((Text("On it."),), Usage(300, 5)))
    session = str(uuid.uuid4())
    turn(claude, "Go on.", session, claude_env(agent_home, model.url), project)
    told = sent(model)
    assert "SessionStart hook additional context" in told and DECISION in told
    [record] = logged(daemon, session, "context.injected")
    assert (record["payload"]["handed_on"], record["payload"]["source"]) == (handoff, "startup")


def test_with_toka_inject_0_nothing_is_sent_and_the_hooks_still_record(
    claude: AgentCli, model: FakeModel, agent_home: Path, daemon: Spawned
) -> None:
    project = agent_home / "project"
    handed_off("earlier-session", project)
    toka("integrate", "claude-code", env={"HOME": str(agent_home)})
    model.script(Reply((Text("On it."),), Usage(300, 5)))
    session = str(uuid.uuid4())
    env = claude_env(agent_home, model.url, TOKA_INJECT="0")
    turn(claude, "Go on.", session, env, project)
    assert DECISION not in sent(model)
    wait_for(lambda: logged(daemon, session, "hook.session_end"), "the session's hooks are recorded")
    assert logged(daemon, session, "hook.session_start") and not logged(daemon, session, "context.injected")


def test_after_compact_the_next_turn_is_sent_the_to_dos_noted_before_it(
    claude: AgentCli, model: FakeModel, agent_home: Path, daemon: Spawned
) -> None:
    project = agent_home / "project"
    toka("integrate", "claude-code", env={"HOME": str(agent_home)})
    env = claude_env(agent_home, model.url)
    session = str(uuid.uuid4())
    model.script(Reply((Text("Started."),), Usage(300, 5)))
    turn(claude, "Start the queue move.", session, env, project)
    toka("record", session, "message", json.dumps({"role": "user", "text": "Start the queue move."}))
    toka("note", session, "todo", TODO)
    model.script(Reply((Text("Summary: the queue move has started."),), Usage(400, 20)))
    turn(claude, "/compact", session, env, project, resume=True)
    wait_for(lambda: logged(daemon, session, "handoff"), "the PreCompact's handoff is in the log")
    before = len(model.agent_turns())
    model.script(Reply((Text("Going on."),), Usage(200, 5)))
    turn(claude, "Go on.", session, env, project, resume=True)
    after = "\n".join(json.dumps(r.body) for r in model.agent_turns()[before:])
    assert TODO in after
    sources = [e["payload"]["source"] for e in logged(daemon, session, "context.injected")]
    assert "compact" in sources


def test_at_92_percent_of_a_200k_window_the_next_prompt_is_told_critical(
    claude: AgentCli, model: FakeModel, agent_home: Path, spawn: Spawner
) -> None:
    project = agent_home / "project"
    # The daemon follows Claude Code's transcripts, which is how it learns the turn's usage.
    projects = agent_home / ".claude" / "projects"
    projects.mkdir(parents=True)
    resolve_paths().config_file.write_text(f"[watch]\npaths = [{json.dumps(str(projects))}]\n")
    daemon = spawn()
    toka("integrate", "claude-code", env={"HOME": str(agent_home)})
    env = claude_env(agent_home, model.url)
    session = str(uuid.uuid4())
    model.script(Reply((Text("Read it all."),), Usage(10, 5, cache_read=183_990)))
    turn(claude, "Read the whole repository.", session, env, project, False, *SONNET)

    def critical() -> bool:
        changes = logged(daemon, session, "lifecycle")
        return any(e["payload"].get("to") == "CRITICAL" for e in changes)

    wait_for(critical, "the session's agent is CRITICAL")
    before = len(model.agent_turns())
    model.script(Reply((Text("Compacting soon."),), Usage(10, 5, cache_read=184_100)))
    turn(claude, "And now?", session, env, project, True, *SONNET)
    after = "\n".join(json.dumps(r.body) for r in model.agent_turns()[before:])
    assert "92% of its 200k-token window (CRITICAL)" in after and "/compact" in after
