"""`toka integrate claude-code`, then the real Claude Code: its hooks land in toka's log."""

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
    assert commands == {f"{TOKA} hook claude-code"}
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

    wait_for(lambda: logged(daemon, session, "hook.session_end"), "the SessionEnd hook is recorded")
    events = hook_events(session)
    assert [e["kind"] for e in events] == HOOK_KINDS
    assert {e["payload"]["session_id"] for e in events} == {session}
    pre, post = events[2]["payload"], events[3]["payload"]
    assert (pre["tool_name"], pre["tool_input"]) == ("Read", {"file_path": str(project / "notes.txt")})
    assert (post["tool_name"], post["tool_response"]["file"]["content"]) == ("Read", "the build runs on port 8421\n")
    assert events[1]["payload"]["prompt"] == "Which port?"
    assert events[0]["payload"]["cwd"] == str(project)
