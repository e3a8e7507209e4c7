"""`toka integrate claude-code`, then the real Claude Code: its hooks land in toka's log, those that
drop their payload into the daemon's inbox (every event that only records) as surely as those that
run toka's hook, and while the daemon is down they wait in the inbox for its next start."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
from agent_clis import TOKA, AgentCli, agent_path, claude_env, logged, run, toka, toka_json
from daemons import Spawned, wait_for
from fake_model import FakeModel, Reply, Text, ToolCall, Usage

from daemon.paths import resolve_paths
from toka_cli.integrate.inbox import is_inbox_command

pytestmark = pytest.mark.e2e

HOOK_KINDS = [
    "hook.session_start",
    "hook.user_prompt_submit",
    "hook.pre_tool_use",
    "hook.post_tool_use",
    "hook.stop",
    "hook.session_end",
]


def hook_events(session: str) -> list[dict[str, Any]]:
    done = toka("events", session, "--kind", "hook.*", "--json")
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def test_hooks_record_a_claude_code_turn_with_its_session_id(
    claude: AgentCli, model: FakeModel, agent_home: Path, daemon: Spawned
) -> None:
    installed = toka_json("integrate", "claude-code", env={"HOME": str(agent_home)})
    assert installed["events"][:2] == ["SessionStart", "UserPromptSubmit"]
    settings = json.loads((agent_home / ".claude" / "settings.json").read_text())
    commands = {h["command"] for groups in settings["hooks"].values() for g in groups for h in g["hooks"]}
    assert len(commands) == 2 and f"{TOKA} hook claude-code" in commands
    assert is_inbox_command((commands - {f"{TOKA} hook claude-code"}).pop(), "claude-code")
    # The point of the absolute path: the agent's PATH does not lead to this toka.
    assert str(TOKA.parent) not in agent_path().split(os.pathsep)
    assert shutil.which("toka", path=agent_path()) != str(TOKA)

    project = agent_home / "project"
    model.script(
        Reply((Text("Reading it."), ToolCall("Read", {"file_path": str(project / "notes.txt")})), Usage(120, 25)),
        Reply((Text("Port 8421."),), Usage(180, 9)),
    )
    session = str(uuid.uuid4())
    env = claude_env(agent_home, model.url)
    run([str(claude.path), "-p", "Which port?", "--allowedTools", "Read", "--session-id", session], env, project)

    wait_for(lambda: len(logged(daemon, session, *HOOK_KINDS)) == len(HOOK_KINDS), "every hook is recorded")
    events = hook_events(session)
    # The hooks that answer land as they run; those dropped into the inbox as the daemon takes them.
    assert [e["kind"] for e in events][:2] == HOOK_KINDS[:2]
    assert sorted(e["kind"] for e in events) == sorted(HOOK_KINDS)
    assert {e["payload"]["session_id"] for e in events} == {session}
    by_kind = {e["kind"]: e for e in events}
    pre, post = by_kind["hook.pre_tool_use"]["payload"], by_kind["hook.post_tool_use"]["payload"]
    assert (pre["tool_name"], pre["tool_input"]) == ("Read", {"file_path": str(project / "notes.txt")})
    assert (post["tool_name"], post["tool_response"]["file"]["content"]) == ("Read", "the build runs on port 8421\n")
    assert events[1]["payload"]["prompt"] == "Which port?"
    assert events[0]["payload"]["cwd"] == str(project)


def test_every_tool_call_of_a_turn_is_recorded_by_the_inbox_hooks(
    claude: AgentCli, model: FakeModel, agent_home: Path, daemon: Spawned
) -> None:
    """Five tool calls at once, then the end of the turn and of `claude -p`: the inbox hooks of all
    of them land, Stop and SessionEnd included, each once."""
    toka_json("integrate", "claude-code", env={"HOME": str(agent_home)})
    project = agent_home / "project"
    files = [project / f"part{i}.txt" for i in range(5)]
    for i, path in enumerate(files):
        path.write_text(f"part {i}\n")
    calls = [ToolCall("Read", {"file_path": str(path)}) for path in files]
    model.script(Reply((Text("Reading."), *calls), Usage(120, 25)), Reply((Text("Read."),), Usage(180, 9)))
    session = str(uuid.uuid4())
    env = claude_env(agent_home, model.url)
    run([str(claude.path), "-p", "Read the parts.", "--allowedTools", "Read", "--session-id", session], env, project)

    expected = ["hook.session_start", "hook.user_prompt_submit", *["hook.pre_tool_use"] * 5]
    expected += ["hook.post_tool_use"] * 5 + ["hook.stop", "hook.session_end"]
    wait_for(lambda: len(logged(daemon, session, *set(expected))) == len(expected), "every hook of the turn")
    events = hook_events(session)
    assert sorted(e["kind"] for e in events) == sorted(expected)
    ids = {call.tool_use_id for call in calls}
    for kind in ("hook.pre_tool_use", "hook.post_tool_use"):
        assert sorted(e["payload"]["tool_use_id"] for e in events if e["kind"] == kind) == sorted(ids)
    posted = {
        e["payload"]["tool_use_id"]: e["payload"]["tool_response"]["file"]["content"]
        for e in events
        if e["kind"] == "hook.post_tool_use"
    }
    assert posted == {call.tool_use_id: f"part {i}\n" for i, call in enumerate(calls)}


def test_the_hooks_of_a_turn_while_the_daemon_is_down_land_at_its_next_start(
    claude: AgentCli, model: FakeModel, agent_home: Path, spawn: Any
) -> None:
    """No daemon: the answering hooks spool, the others leave their payloads in the inbox; the
    daemon that starts next takes both before its socket answers, every event once."""
    toka_json("integrate", "claude-code", env={"HOME": str(agent_home)})
    project = agent_home / "project"
    model.script(
        Reply((Text("Reading it."), ToolCall("Read", {"file_path": str(project / "notes.txt")})), Usage(120, 25)),
        Reply((Text("Port 8421."),), Usage(180, 9)),
    )
    session = str(uuid.uuid4())
    run([str(claude.path), "-p", "Which port?", "--allowedTools", "Read", "--session-id", session],
        claude_env(agent_home, model.url), project)  # fmt: skip
    paths = resolve_paths()
    assert len(os.listdir(paths.inbox)) == 4  # PreToolUse, PostToolUse, Stop, SessionEnd
    assert len(paths.spool.read_text().splitlines()) == 2  # SessionStart, UserPromptSubmit
    daemon = spawn()
    assert sorted(e["kind"] for e in logged(daemon, session, *HOOK_KINDS)) == sorted(HOOK_KINDS)
    assert os.listdir(paths.inbox) == [] and not paths.spool.exists()
