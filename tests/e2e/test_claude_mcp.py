"""`toka mcp` as Claude Code's MCP server, installed by `toka integrate claude-code`."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from agent_clis import AgentCli, claude_env, run, toka, toka_json
from daemons import Spawned
from fake_model import FakeModel, Reply, Request, Text, ToolCall, Usage

pytestmark = pytest.mark.e2e

# How long Claude Code may wait for `toka mcp` before its first request (it stops waiting as soon
# as the server is connected).
MCP_WAIT_MS = "60000"
TOKA_TOOLS = {
    f"mcp__toka__{name}"
    for name in ("search", "recall", "memory_get", "memory_set", "memory_list", "note", "context", "handoff", "usage")
}


def tool_results(request: Request) -> dict[str, Any]:
    """The tool_result blocks the request sends back, by tool_use_id. (Not only in its last
    message: Claude Code adds the instructions of an MCP server that connected late after them.)"""
    return {
        block["tool_use_id"]: block
        for message in request.body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    }


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def claude_turn(claude: AgentCli, model: FakeModel, home: Path, prompt: str, session: str) -> None:
    # Tools offered up front, not behind Claude Code's tool search; and MCP servers connected
    # before the first request: 2.1.3xx waits a moment only by default, and `toka mcp` takes
    # a second or more to start on a busy machine.
    env = claude_env(home, model.url, ENABLE_TOOL_SEARCH="false", CLAUDE_CODE_MCP_STARTUP_WAIT_MS=MCP_WAIT_MS)
    command = [str(claude.path), "-p", prompt, "--allowedTools", "mcp__toka", "--session-id", session]
    run(command, env, home / "project")


def test_claude_code_calls_tokas_memory_tools(
    claude: AgentCli, model: FakeModel, agent_home: Path, daemon: Spawned
) -> None:
    installed = toka_json("integrate", "claude-code", env={"HOME": str(agent_home)})
    assert installed["mcp"]["state"] == "added"
    put = ToolCall("mcp__toka__memory_set", {"scope": "global", "key": "build.port", "value": {"port": 8421}})
    get = ToolCall("mcp__toka__memory_get", {"scope": "global", "key": "build.port"})
    find = ToolCall("mcp__toka__search", {"query": "port"})
    model.script(
        Reply((put,), Usage(200, 30)),
        Reply((get,), Usage(260, 20)),
        Reply((find,), Usage(300, 15)),
        Reply((Text("Remembered: port 8421."),), Usage(340, 12)),
    )
    session = str(uuid.uuid4())
    claude_turn(claude, model, agent_home, "remember the build port", session)

    turns = model.agent_turns()
    assert len(turns) == 4 and not model.unscripted
    assert set(turns[0].tool_names) >= TOKA_TOOLS
    stored = json.loads(result_text(tool_results(turns[1])[put.tool_use_id]))
    assert (stored["scope"], stored["key"], stored["value"], stored["version"]) == (
        "global",
        "build.port",
        {"port": 8421},
        1,
    )
    read = json.loads(result_text(tool_results(turns[2])[get.tool_use_id]))
    assert (read["value"], read["version"]) == ({"port": 8421}, 1)
    found = json.loads(result_text(tool_results(turns[3])[find.tool_use_id]))
    # Hooks are not indexed (docs/search.md): the one hit is the memory entry the agent just set.
    assert [(hit["session"], hit["kind"], hit["snippet"]) for hit in found["hits"]] == [
        ("toka.memory", "memory.set", "build.«port»")
    ]

    entry = toka_json("memory", "get", "global", "build.port")
    assert (entry["value"], entry["version"]) == ({"port": 8421}, 1)


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="toka mcp picks the session of its directory from session.meta (written by import/watch only), so a "
    "live session known from its hooks alone loses to an older imported session of the same project: the note "
    "goes to that older session (toka_cli/mcp/link.py, Link.session)",
)
def test_a_note_lands_in_the_claude_code_session_that_wrote_it(
    claude: AgentCli, model: FakeModel, agent_home: Path, daemon: Spawned
) -> None:
    toka("integrate", "claude-code", env={"HOME": str(agent_home)})
    earlier, current = str(uuid.uuid4()), str(uuid.uuid4())
    model.script(Reply((Text("Hello."),), Usage(50, 5)))
    # The earlier session calls no tool: it need not wait for the MCP server.
    run(
        [str(claude.path), "-p", "hello", "--session-id", earlier],
        claude_env(agent_home, model.url),
        agent_home / "project",
    )
    toka("import", str(agent_home / ".claude" / "projects"))  # the earlier session, with its project

    note = ToolCall("mcp__toka__note", {"kind": "decision", "text": "serve the build on port 8421"})
    model.script(Reply((note,), Usage(200, 30)), Reply((Text("Noted."),), Usage(240, 6)))
    claude_turn(claude, model, agent_home, "decide the port", current)

    answer = json.loads(result_text(tool_results(model.agent_turns()[-1])[note.tool_use_id]))
    assert answer["session"] != earlier, "the note went to the earlier session of this project"
    assert (answer["session"], answer["kind"]) == (current, "note.decision")
    events = [json.loads(line) for line in toka("events", current, "--kind", "note.*", "--json").stdout.splitlines()]
    assert [e["payload"]["text"] for e in events] == ["serve the build on port 8421"]
