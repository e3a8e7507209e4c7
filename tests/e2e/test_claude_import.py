"""What the real Claude Code wrote, imported: toka's figures are the model's, to the token, and
its cost is the one Claude Code computed itself."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from agent_clis import AgentCli, claude_env, run, toka_json
from daemons import Spawned
from fake_model import FakeModel, Reply, Text, ToolCall, Usage

pytestmark = pytest.mark.e2e

MODEL = "claude-opus-5-5"
FIRST = Usage(input=120, output=25, cache_creation=3000, cache_read=400, cache_creation_1h=1000)
SECOND = Usage(input=180, output=9, cache_creation=0, cache_read=3520)
TOTALS = {
    "calls": 2,
    "input_tokens": 300,
    "output_tokens": 34,
    "cache_creation_tokens": 3000,
    "cache_creation_1h_tokens": 1000,
    "cache_read_tokens": 3920,
    "total_tokens": 7254,
}
# At claude-opus-5-5's rates per million (input 4, output 20, cache read 0.2, 5-minute cache
# write 5, 1-hour 8): 300*4 + 34*20 + 3920*0.2 + 2000*5 + 1000*8 = 20664 millionths.
COST_USD = 0.020664


def claude_code_cost(transcript: Path) -> float:
    """What Claude Code says the session cost: its last ``cost-state`` record."""
    states = [r for r in map(json.loads, transcript.read_text().splitlines()) if r.get("type") == "cost-state"]
    return round(float(states[-1]["totalCostUSD"]), 6)


def test_import_of_a_claude_code_transcript_has_the_models_usage(
    claude: AgentCli, model: FakeModel, agent_home: Path, daemon: Spawned
) -> None:
    project = agent_home / "project"
    model.script(
        Reply((Text("Reading it."), ToolCall("Read", {"file_path": str(project / "notes.txt")})), FIRST),
        Reply((Text("Port 8421."),), SECOND),
    )
    session = str(uuid.uuid4())
    command = [str(claude.path), "-p", "Which port?", "--model", MODEL, "--allowedTools", "Read"]
    command += ["--session-id", session]
    run(command, claude_env(agent_home, model.url), project)
    transcripts = list((agent_home / ".claude" / "projects").glob("*/*.jsonl"))
    assert [p.name for p in transcripts] == [f"{session}.jsonl"]

    imported = toka_json("import", str(agent_home / ".claude" / "projects"))
    assert (imported["sessions"], imported["bad_lines"]) == ([session], [])
    again = toka_json("import", str(agent_home / ".claude" / "projects"))
    assert (again["created"], again["existing"]) == (0, imported["created"])

    usage = toka_json("usage", session)
    assert {name: usage[name] for name in TOTALS if name in usage} == {
        name: value for name, value in TOTALS.items() if name not in ("cache_creation_1h_tokens", "total_tokens")
    }
    # The fill is the latest prompt: SECOND's input, cache writes and cache reads.
    assert (usage["model"], usage["context_tokens"], usage["context_window"]) == (MODEL, 3700, 1_000_000)

    report = toka_json("report", "session")
    [row] = report["rows"]
    assert (row["session"], row["source"], row["project"], row["models"]) == (
        session,
        "claude-code",
        str(project),
        [MODEL],
    )
    assert {name: row[name] for name in TOTALS} == TOTALS
    assert row["cost_usd"] == COST_USD == claude_code_cost(transcripts[0])
    assert (row["unpriced_calls"], report["totals"]["cost_usd"]) == (0, COST_USD)
