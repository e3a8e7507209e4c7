"""`toka sessions` / `toka show`: where an imported session came from and how full its context is.

The expected values are read from the raw fixture files here, independently of toka's parsers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import invoke
from transcripts import raw_records, shared_or_skip

CLAUDE = "d-kimuson__1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
CODEX = "madshn__rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl"
OVERVIEW = ("source", "project", "model", "context_tokens", "context_window", "fill_pct")


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def imported(path: Path) -> dict[str, Any]:
    """Import one file holding one session; that session as `toka sessions --json` lists it."""
    result = invoke("import", str(path), "--json")
    assert result.exit_code == 0, result.stderr
    (name,) = json.loads(result.stdout)["sessions"]
    listed = json.loads(invoke("sessions", "--json").stdout)["sessions"]
    (session,) = [s for s in listed if s["session"] == name]
    assert json.loads(invoke("show", name, "--json").stdout) == session
    return session


def overview(session: dict[str, Any]) -> dict[str, Any]:
    return {name: session[name] for name in OVERVIEW}


def test_a_claude_code_transcript_shows_its_source_project_model_and_fill() -> None:
    raw = records(shared_or_skip("fixtures", "transcripts", "claude", CLAUDE))
    project = next(r["cwd"] for r in raw if r.get("cwd"))
    main_responses = [
        r["message"]
        for r in raw
        if r.get("type") == "assistant" and not r.get("isSidechain") and "usage" in r.get("message", {})
    ]
    latest = main_responses[-1]
    context = sum(
        latest["usage"].get(n, 0) for n in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    assert overview(imported(shared_or_skip("fixtures", "transcripts", "claude", CLAUDE))) == {
        "source": "claude-code",
        "project": project,
        "model": latest["model"],
        "context_tokens": context,
        "context_window": 200_000,
        "fill_pct": round(100 * context / 200_000, 1),
    }


def test_a_codex_rollout_shows_its_source_project_model_and_fill() -> None:
    path = shared_or_skip("fixtures", "transcripts", "codex", CODEX)
    raw = records(path)
    assert raw[0]["type"] == "session_meta"
    models = [r["payload"]["model"] for r in raw if r.get("type") == "turn_context"]
    counts = [
        r["payload"]["info"]
        for r in raw
        if r.get("type") == "event_msg" and r["payload"].get("type") == "token_count" and r["payload"].get("info")
    ]
    assert len(counts) > 1  # the figures are the latest call's, not the first's
    context, window = counts[-1]["last_token_usage"]["total_tokens"], counts[-1]["model_context_window"]
    assert overview(imported(path)) == {
        "source": "codex",
        "project": raw[0]["payload"]["cwd"],
        "model": models[-1],
        "context_tokens": context,
        "context_window": window,
        "fill_pct": round(100 * context / window, 1),
    }


def test_a_session_recorded_by_hand_has_nulls() -> None:
    assert invoke("record", "by-hand", "message", '{"text": "hi"}').exit_code == 0
    session = json.loads(invoke("show", "by-hand", "--json").stdout)
    assert overview(session) == dict.fromkeys(OVERVIEW)
    table = invoke("sessions").stdout
    assert "by-hand" in table and "source" in table and "fill" in table


def test_the_latest_main_prompt_is_found_behind_many_subagent_calls() -> None:
    main = {"model": "claude-sonnet-4-5", "input_tokens": 10, "cache_creation_tokens": 0, "cache_read_tokens": 30_000}
    assert invoke("record", "s", "usage", json.dumps(main), "--agent", "main").exit_code == 0
    sub = {"model": "claude-haiku-4-5", "input_tokens": 99_000, "output_tokens": 1}
    lines = "".join(json.dumps(sub) + "\n" for _ in range(200))  # several pages read backwards
    assert invoke("record", "s", "usage", "--agent", "explorer", input=lines).exit_code == 0
    session = json.loads(invoke("show", "s", "--json").stdout)
    usage = json.loads(invoke("usage", "s", "--json").stdout)
    assert overview(session) == {
        "source": None,
        "project": None,
        "model": "claude-sonnet-4-5",
        "context_tokens": 30_010,
        "context_window": 200_000,
        "fill_pct": 15.0,
    }
    assert {name: usage[name] for name in OVERVIEW[2:]} == {name: session[name] for name in OVERVIEW[2:]}


def test_the_figures_agree_with_toka_usage_on_a_transcript_with_subagents() -> None:
    folder = shared_or_skip("fixtures", "transcripts", "claude", "marot__fa812bfe-b295-4cca-9c2f-fdf01028cb46")
    main = folder.with_suffix(".jsonl")
    result = invoke("import", str(main), str(folder), "--json")
    assert result.exit_code == 0, result.stderr
    for name in json.loads(result.stdout)["sessions"]:
        session = json.loads(invoke("show", name, "--json").stdout)
        usage = json.loads(invoke("usage", name, "--json").stdout)
        assert session["source"] == "claude-code"
        assert {n: usage[n] for n in OVERVIEW[2:]} == {n: session[n] for n in OVERVIEW[2:]}


@pytest.mark.parametrize(
    "name", ["marot__8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl", "codemie-ai__session-624a4a58.jsonl"]
)
def test_show_counts_each_compaction_once(name: str) -> None:
    path = shared_or_skip("fixtures", "transcripts", "claude", name)
    boundaries = sum(1 for r in raw_records(path) if r.get("subtype") == "compact_boundary")
    summaries = sum(1 for r in raw_records(path) if r.get("isCompactSummary") is True)
    result = invoke("import", str(path), "--json")
    assert result.exit_code == 0, result.stderr
    [session] = json.loads(result.stdout)["sessions"]
    kinds = json.loads(invoke("show", session, "--json").stdout)["kinds"]
    assert (kinds.get("compaction"), kinds.get("compaction.summary")) == (boundaries, summaries) == (1, 1)
    assert "compaction 1" in invoke("show", session).stdout
