"""Claude Code interactive, in tmux, with toka as its status line: toka records what the status
line is given and then works with the window Claude Code reported."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_clis import AgentCli, claude_env, logged, toka, toka_json
from daemons import Spawned, wait_for
from fake_model import FakeModel, Reply, Text, Usage

pytestmark = pytest.mark.e2e

MODEL = "claude-opus-5-5"
REPLY = Usage(input=100, output=20, cache_creation=3000, cache_read=500)
# Claude Code starts in a few seconds when all is well; a loaded machine takes longer.
START_S = 60.0


class Terminal:
    """A tmux server of this test's own (its socket in the agent's HOME), one window."""

    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-S", str(self.socket), *args], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, f"tmux {' '.join(args)}: {done.stderr}"
        return done.stdout

    def start(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        line = shlex.join(["env", "-i", *(f"{name}={value}" for name, value in env.items()), *command])
        self.tmux("new-session", "-d", "-x", "160", "-y", "40", "-c", str(cwd), line)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p")

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-l", text)
        self.tmux("send-keys", "Enter")


@pytest.fixture
def terminal(agent_home: Path) -> Iterator[Terminal]:
    if shutil.which("tmux") is None:
        pytest.skip("the status line test runs Claude Code interactive in tmux, which is not installed")
    running = Terminal(agent_home / "tmux.sock")  # a short path: a socket's is at most 107 bytes
    yield running
    subprocess.run(["tmux", "-S", str(running.socket), "kill-server"], capture_output=True, timeout=30)


def test_the_status_line_reports_claude_codes_window_to_toka(
    claude: AgentCli, model: FakeModel, agent_home: Path, daemon: Spawned, terminal: Terminal
) -> None:
    project = agent_home / "project"
    env = claude_env(agent_home, model.url)
    # A fresh HOME without its dialogs: onboarding done, the project trusted, the key approved.
    onboarded = {
        "hasCompletedOnboarding": True,
        "projects": {str(project): {"hasTrustDialogAccepted": True}},
        "customApiKeyResponses": {"approved": [env["ANTHROPIC_API_KEY"][-20:]], "rejected": []},
    }
    (agent_home / ".claude.json").write_text(json.dumps(onboarded))
    # Without the MCP server, which Claude Code waits for before its first request: the status
    # line is what this test is about.
    installed = toka_json("integrate", "claude-code", "--statusline", "--no-mcp", env={"HOME": str(agent_home)})
    assert installed["statusline"]["state"] == "added"

    model.script(Reply((Text("Hello."),), REPLY))
    session = str(uuid.uuid4())
    terminal.start([str(claude.path), "--model", MODEL, "--session-id", session], env, project)
    wait_for(lambda: "❯" in terminal.screen(), "Claude Code shows its prompt", timeout=START_S)
    terminal.type("say hello")

    def after_the_turn() -> list[dict[str, Any]]:
        inputs = [e["payload"] for e in logged(daemon, session, "statusline")]
        return [p for p in inputs if (p.get("context_window") or {}).get("current_usage")]

    wait_for(after_the_turn, "the status line ran after the turn", timeout=START_S)
    recorded = toka("events", session, "--kind", "statusline", "--json").stdout.splitlines()
    shown = json.loads(recorded[-1])["payload"]
    window = shown["context_window"]
    assert (shown["session_id"], shown["model"]["id"], window["context_window_size"]) == (session, MODEL, 1_000_000)
    assert window["current_usage"] == {
        "input_tokens": 100,
        "output_tokens": 20,
        "cache_creation_input_tokens": 3000,
        "cache_read_input_tokens": 500,
    }
    # The line toka printed is on Claude Code's screen.
    wait_for(lambda: re.search(r"Opus 5\.5 · ctx \d+%", terminal.screen()), "toka's status line is shown")

    toka("import", str(agent_home / ".claude" / "projects"))
    usage = toka_json("usage", session)
    assert (usage["context_window"], usage["window_source"]) == (1_000_000, "reported")
    assert usage["context_tokens"] == 3600 == sum(v for k, v in window["current_usage"].items() if k != "output_tokens")
