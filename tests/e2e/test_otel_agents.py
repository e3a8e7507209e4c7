"""`toka integrate ... --otel`, then the real Claude Code and Codex: their own telemetry reaches
the daemon's receiver, and the reports then hold the model's figures to the token, Claude Code's
cost beside toka's to the cent; the transcript imported afterwards counts nothing twice."""

from __future__ import annotations

import json
import socket
import uuid
from pathlib import Path

import pytest
from agent_clis import AgentCli, claude_env, codex_env, run, toka, toka_json
from daemons import Spawned, Spawner, wait_for
from fake_model import FakeModel, Reply, Text, Usage

pytestmark = pytest.mark.e2e

CLAUDE_MODEL = "claude-opus-5-5"
CLAUDE_USAGE = Usage(input=120, output=25, cache_creation=3000, cache_read=400)
CLAUDE_TOTALS = {
    "calls": 1,
    "input_tokens": 120,
    "output_tokens": 25,
    "cache_creation_tokens": 3000,
    "cache_read_tokens": 400,
}
# At claude-opus-5-5's rates per million (input 4, output 20, cache read 0.2, 5-minute cache
# write 5): 120*4 + 25*20 + 400*0.2 + 3000*5 = 16060 millionths.
CLAUDE_COST_USD = 0.01606

CODEX_MODEL = "gpt-5.1"
CODEX_USAGE = Usage(input=1000, output=50, cache_read=600)
# toka counts OpenAI's input without its cached part, which it counts as cache reads.
CODEX_TOTALS = {"calls": 1, "input_tokens": 400, "output_tokens": 50, "cache_read_tokens": 600}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def receiving(spawn: Spawner, monkeypatch: pytest.MonkeyPatch) -> Spawned:
    """A daemon whose receiver listens where `toka integrate --otel` (run with the same
    environment) points the agents."""
    listen = f"127.0.0.1:{free_port()}"
    monkeypatch.setenv("TOKA_OTEL_LISTEN", listen)
    daemon = spawn()
    assert daemon.status()["otel"]["listen"] == listen
    return daemon


def session_row(session: str) -> dict[str, object] | None:
    rows = toka_json("report", "session")["rows"]
    return next((row for row in rows if row["session"] == session), None)


def test_claude_code_telemetry_lands_exact_and_its_transcript_counts_once(
    claude: AgentCli, model: FakeModel, agent_home: Path, receiving: Spawned
) -> None:
    installed = toka_json("integrate", "claude-code", "--otel", env={"HOME": str(agent_home)})
    assert installed["changed"]
    settings = json.loads((agent_home / ".claude" / "settings.json").read_text())
    assert settings["env"]["OTEL_EXPORTER_OTLP_PROTOCOL"] == "http/protobuf"

    model.script(Reply((Text("Port 8421."),), CLAUDE_USAGE))
    session = str(uuid.uuid4())
    command = [str(claude.path), "-p", "Which port?", "--model", CLAUDE_MODEL, "--session-id", session]
    run(command, claude_env(agent_home, model.url), agent_home / "project")

    # Claude Code sends its logs and metrics as it exits; the receiver answers once committed.
    row = wait_for(lambda: session_row(session), "Claude Code's telemetry reached the receiver")
    assert row["usage_source"] == "telemetry"
    assert {name: row[name] for name in CLAUDE_TOTALS} == CLAUDE_TOTALS
    assert row["cost_usd"] == CLAUDE_COST_USD
    compared = toka_json("report", "session", "--compare", "telemetry")
    [line] = [r for r in compared["rows"] if r["session"] == session]
    assert line["model"] == CLAUDE_MODEL and line["calls"] == 1
    assert line["agent_cost_usd"] == line["toka_cost_usd"] == CLAUDE_COST_USD
    assert line["difference_pct"] == 0.0
    assert line["metric_cost_usd"] == pytest.approx(CLAUDE_COST_USD)

    # The same request from the transcript: still one call, the first source's.
    toka("import", str(agent_home / ".claude" / "projects"))
    again = session_row(session)
    assert again is not None and {name: again[name] for name in CLAUDE_TOTALS} == CLAUDE_TOTALS
    assert again["cost_usd"] == CLAUDE_COST_USD


def test_codex_telemetry_lands_with_its_token_counts_and_its_rollout_counts_once(
    codex: AgentCli, model: FakeModel, agent_home: Path, receiving: Spawned
) -> None:
    config = agent_home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        f"""model = "{CODEX_MODEL}"
model_provider = "fake"
approval_policy = "never"

[model_providers.fake]
name = "fake"
base_url = "{model.url}/v1"
env_key = "FAKE_KEY"
wire_api = "responses"
"""
    )
    env = codex_env(agent_home)
    toka("integrate", "codex", "--otel", "--no-mcp", "--no-notify", env={"HOME": str(agent_home), **env})
    assert 'protocol = "binary"' in config.read_text() and "/v1/logs" in config.read_text()

    model.script(Reply((Text("Port 8421."),), CODEX_USAGE), api="openai")
    run([str(codex.path), "exec", "--skip-git-repo-check", "Which port?"], env, agent_home / "project")

    [rollout] = (agent_home / ".codex" / "sessions").glob("*/*/*/rollout-*.jsonl")
    thread = json.loads(rollout.read_text().splitlines()[0])["payload"]["id"]
    row = wait_for(lambda: session_row(thread), "Codex's telemetry reached the receiver")
    assert row["usage_source"] == "telemetry"
    assert {name: row[name] for name in CODEX_TOTALS} == CODEX_TOTALS

    # The same response from the rollout (Codex names none: its four counts do) counts once.
    toka("import", str(rollout))
    again = session_row(thread)
    assert again is not None and {name: again[name] for name in CODEX_TOTALS} == CODEX_TOTALS
