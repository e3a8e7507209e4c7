"""`toka integrate codex`, then the real Codex: it calls toka's MCP server, its notify program
records the turn, and its rollout imports with the model's figures to the token."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_clis import AgentCli, codex_env, run, toka, toka_json
from daemons import Spawned, wait_for
from fake_model import FakeModel, Reply, Text, ToolCall, Usage

pytestmark = pytest.mark.e2e

# A model Codex offers MCP tools to directly, as one namespace tool (for the models it knows to
# support tool search, gpt-5.5 among them, it defers them behind `tool_search`).
MODEL = "gpt-5.1"
FIRST = Usage(input=1000, output=50, cache_read=600, reasoning=20)
SECOND = Usage(input=1200, output=30, cache_read=1000)
# toka counts OpenAI's input without its cached part, which it counts as cache reads.
TOTALS = {
    "calls": 2,
    "input_tokens": 600,
    "output_tokens": 80,
    "cache_creation_tokens": 0,
    "cache_read_tokens": 1600,
}
# At gpt-5.1's rates per million (input 1.25, output 10, cached input 0.125):
# 600*1.25 + 80*10 + 1600*0.125 = 1750 millionths.
COST_USD = 0.00175
TOKA_TOOLS = ["context", "handoff", "memory_get", "memory_list", "memory_set", "note", "recall", "search", "usage"]


def tool_output(output: str | list[dict[str, Any]]) -> str:
    """What the tool returned, from a function_call_output's ``output``: Codex's text after its
    ``Output:`` line (or, for an error, its content items, which the failed check shows)."""
    if isinstance(output, list):
        raise AssertionError(f"the tool call failed: {output}")
    return output.split("Output:\n", 1)[1]


def write_config(home: Path, model_url: str) -> Path:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        f"""# the loopback model of this test
model = "{MODEL}"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "fake"
base_url = "{model_url}/v1"
env_key = "FAKE_KEY"
wire_api = "responses"
"""
    )
    return config


def codex_turn(codex: AgentCli, model: FakeModel, home: Path, *replies: Reply) -> None:
    """`toka integrate codex` over the test's config, then one `codex exec` answered by ``replies``."""
    config = write_config(home, model.url)
    before = config.read_text()
    env = codex_env(home)
    toka("integrate", "codex", env={"HOME": str(home), "CODEX_HOME": env["CODEX_HOME"]})
    after = config.read_text()
    # The user's file is kept: toka's notify goes above the first table, its server at the end.
    head, provider = before.split("\n[model_providers.fake]\n")
    assert after.startswith(head + 'notify = ["') and f"\n[model_providers.fake]\n{provider}" in after
    model.script(*replies, api="openai")
    # Codex 0.17x sends its first request without waiting for MCP servers that are still
    # starting (`toka mcp` takes a second or more), unless the server is `required`; given a
    # minute to start (10 s by default), for a busy machine.
    wait = ["-c", "mcp_servers.toka.required=true", "-c", "mcp_servers.toka.startup_timeout_sec=60"]
    command = [str(codex.path), "exec", "--skip-git-repo-check", *wait, "store the port"]
    run(command, env, home / "project")


def test_codex_calls_tokas_tools_and_its_rollout_imports_exactly(
    codex: AgentCli, model: FakeModel, agent_home: Path, daemon: Spawned
) -> None:
    put = ToolCall("memory_set", {"scope": "global", "key": "build.port", "value": 8421}, namespace="mcp__toka")
    codex_turn(codex, model, agent_home, Reply((put,), FIRST), Reply((Text("Stored."),), SECOND))

    first, second = model.agent_turns("/v1/responses")
    assert [n.split("/", 1)[1] for n in first.tool_names if n.startswith("mcp__toka/")] == TOKA_TOOLS
    [output] = [item for item in second.body["input"] if item.get("type") == "function_call_output"]
    assert output["call_id"] == put.call_id
    answer = json.loads(tool_output(output["output"]))
    assert (answer["scope"], answer["key"], answer["value"], answer["version"]) == ("global", "build.port", 8421, 1)

    [rollout] = (agent_home / ".codex" / "sessions").glob("*/*/*/rollout-*.jsonl")
    thread = json.loads(rollout.read_text().splitlines()[0])["payload"]["id"]
    turn = "hook.agent_turn_complete"  # Codex's hooks record the rest of the session (test_codex_hooks.py)
    notified = wait_for(
        lambda: toka("events", thread, "--kind", turn, "--json").stdout.splitlines(), "the notify program ran"
    )
    assert [json.loads(line)["kind"] for line in notified] == [turn]

    imported = toka_json("import", str(rollout))
    assert (imported["sessions"], imported["formats"], imported["bad_lines"]) == ([thread], {"codex": 1}, [])
    usage = toka_json("usage", thread)
    assert {name: usage[name] for name in TOTALS} == TOTALS
    # The fill is the last call's prompt and reply, in the window Codex reported.
    assert (usage["model"], usage["context_tokens"], usage["context_window"]) == (MODEL, 1230, 258_400)
    [row] = toka_json("report", "session")["rows"]
    assert (row["session"], row["source"], row["models"]) == (thread, "codex", [MODEL])
    assert {name: row[name] for name in TOTALS} == TOTALS
    assert (row["total_tokens"], row["cost_usd"]) == (2280, COST_USD)


def test_codex_s_toka_server_keeps_to_the_toka_home_codex_runs_with(
    codex: AgentCli, model: FakeModel, agent_home: Path, daemon: Spawned
) -> None:
    put = ToolCall("memory_set", {"scope": "global", "key": "build.port", "value": 8421}, namespace="mcp__toka")
    codex_turn(codex, model, agent_home, Reply((put,), FIRST), Reply((Text("Stored."),), SECOND))

    assert not list(agent_home.rglob("toka.db")), "toka mcp opened a database under the agent's HOME"
    entry = toka_json("memory", "get", "global", "build.port")
    assert (entry["value"], entry["version"]) == (8421, 1)
