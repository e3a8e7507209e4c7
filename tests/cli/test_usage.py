"""`toka usage`: context fill from the latest main-chain prompt, cumulative tokens from every call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import invoke
from transcripts import TRANSCRIPTS, shared_or_skip

from daemon.client.sync import Client
from daemon.client.transfer import import_files
from daemon.ingest.transcripts import find_transcripts


def record(session: str, payload: dict[str, Any], agent: str = "main", kind: str = "usage") -> None:
    result = invoke("record", session, kind, json.dumps(payload), "--agent", agent)
    assert result.exit_code == 0, result.stderr


def usage_json(session: str) -> dict[str, Any]:
    result = invoke("usage", session, "--json")
    assert result.exit_code == 0, result.stderr
    figures: dict[str, Any] = json.loads(result.stdout)
    return figures


def anthropic(i: int, cc: int, cr: int, out: int, **extra: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "input_tokens": i, "cache_creation_tokens": cc,
            "cache_read_tokens": cr, "output_tokens": out, **extra}  # fmt: skip


def test_fill_is_the_latest_main_prompt_and_totals_are_every_call() -> None:
    record("s", anthropic(10, 1000, 0, 50))
    record("s", anthropic(5, 200, 1000, 70))
    record("s", anthropic(7, 9000, 0, 30), agent="explorer")  # a subagent: its own window
    record("s", anthropic(3, 0, 0, 20, sidechain=True))  # an inline sidechain, likewise
    context = 5 + 200 + 1000
    assert usage_json("s") == {
        "session": "s",
        "agent": "s/main",  # whose fill it is; the main agent is charged with its subagents' calls
        "model": "claude-sonnet-4-5",
        "context_tokens": context,
        "context_window": 200_000,
        "window_source": "table",
        "fill_pct": 0.6,
        "headroom_tokens": 200_000 - context,
        "thresholds": {"warning_pct": 75.0, "critical_pct": 90.0, "compress_pct": 75.0},
        "tokens_until": {"warning": 150_000 - context, "critical": 180_000 - context, "compression": 150_000 - context},
        "input_tokens": 25,
        "output_tokens": 170,
        "cache_creation_tokens": 10_200,
        "cache_read_tokens": 1000,
        "calls": 4,
        "per_call": {
            "context_tokens": {"avg": (1010 + context) / 2, "min": 1010, "max": context},
            "output_tokens": {"avg": 42.5, "min": 20, "max": 70},
        },
        "last_usage_ts": usage_json("s")["last_usage_ts"],
        "compressed_tokens": None,
        "compressed_ts": None,
        "state": "ACTIVE",
    }
    assert "window assumed" not in invoke("usage", "s").stdout


def test_an_unknown_model_gets_the_default_window_shown_as_assumed() -> None:
    record("u", {"model": "house-model-7", "input_tokens": 500, "output_tokens": 10})
    figures = usage_json("u")
    assert (figures["context_window"], figures["window_source"]) == (200_000, "default")
    assert "window assumed (model unknown)" in invoke("usage", "u").stdout


def test_config_windows_override_the_table(toka_home: Path) -> None:
    (toka_home / "config.toml").write_text('[models]\nwindows = { "house-model" = 32000 }\n')
    record("c", {"model": "house-model-7", "input_tokens": 8000, "output_tokens": 10})
    figures = usage_json("c")
    assert (figures["context_window"], figures["window_source"], figures["fill_pct"]) == (32_000, "config", 25.0)


def test_a_prompt_larger_than_the_tables_window_means_the_1m_variant() -> None:
    record("big", anthropic(10, 0, 300_000, 5))
    figures = usage_json("big")
    assert (figures["context_window"], figures["window_source"], figures["fill_pct"]) == (1_000_000, "observed", 30.0)


def test_a_reported_window_and_openai_counts() -> None:
    codex = {"model": "gpt-5.3-codex", "input_tokens": 1000, "cached_input_tokens": 800, "output_tokens": 40,
             "context_tokens": 1040, "context_window": 258_400}  # fmt: skip
    record("c", codex)
    figures = usage_json("c")
    assert (figures["context_window"], figures["window_source"]) == (258_400, "reported")
    assert (figures["input_tokens"], figures["cache_read_tokens"]) == (200, 800)  # input includes cached
    assert figures["fill_pct"] == round(100 * 1040 / 258_400, 1)


def test_a_one_million_window_model() -> None:
    record("m", anthropic(1, 0, 300_000, 1, model="claude-opus-4-8[1m]"))
    assert usage_json("m")["fill_pct"] == 30.0


def test_claude_codes_default_model_reads_against_its_one_million_window() -> None:
    """180k tokens on claude-opus-5-5 (Claude Code's default, 1M) is 18%: ACTIVE, not CRITICAL."""
    record("d", anthropic(10, 0, 180_000, 5, model="claude-opus-5-5"))
    figures = usage_json("d")
    assert (figures["context_window"], figures["window_source"], figures["fill_pct"]) == (1_000_000, "table", 18.0)
    assert figures["state"] == "ACTIVE"


def test_a_dated_model_name_finds_its_window_in_the_table() -> None:
    record("o", anthropic(10, 0, 150_000, 5, model="claude-opus-4-1-20250805"))
    figures = usage_json("o")
    assert (figures["context_window"], figures["window_source"], figures["fill_pct"]) == (200_000, "table", 75.0)
    assert figures["state"] == "WARNING"


def test_an_automatic_compaction_below_200k_means_the_model_ran_at_200k() -> None:
    """The table gives claude-opus-4-6 1M, its largest window; a Claude Code session that compacted
    itself at 167k ran it at 200k (no `[1m]`), so 150k there is 75%, not 15%."""
    record("c", anthropic(10, 0, 167_000, 5, model="claude-opus-4-6"))
    assert usage_json("c")["window_source"] == "table"
    record("c", {"trigger": "auto", "pre_tokens": 167_010}, kind="compaction")
    record("c", anthropic(10, 0, 150_000, 5, model="claude-opus-4-6"))
    figures = usage_json("c")
    assert (figures["context_window"], figures["window_source"], figures["fill_pct"]) == (200_000, "compaction", 75.0)
    assert figures["state"] == "WARNING"


def test_a_subagents_compaction_says_nothing_of_the_main_window() -> None:
    record("c", anthropic(10, 0, 150_000, 5, model="claude-opus-4-6"))
    record("c", {"trigger": "auto", "pre_tokens": 160_000}, kind="compaction", agent="explorer")
    assert usage_json("c")["window_source"] == "table"


def test_real_sessions_read_against_the_window_they_ran_with() -> None:
    """On the fixtures: claude-opus-4-8 reached 298k (1M); the claude-opus-4-6 sessions that Claude
    Code compacted at about 167k ran at 200k; claude-sonnet-4-5 is 200k in the table."""
    folder = shared_or_skip("fixtures", "transcripts", "claude")
    with Client() as client:
        import_files(client, [folder])
        sessions = {s["session"]: s for s in client.call("sessions.list")["sessions"]}
    windows = {
        "4f65f198-0c0c-47a2-b6ab-5f2e30ae5cbe": 1_000_000,
        "8463c716-a2ea-4c14-9efa-87158ebd9f20": 200_000,
        "fa812bfe-b295-4cca-9c2f-fdf01028cb46": 200_000,
        "196820da-1026-4b6f-a513-a6aae42da1a6": 200_000,
    }
    assert {name: sessions[name]["context_window"] for name in windows} == windows


def test_no_usage_yet_and_unknown_session() -> None:
    assert invoke("record", "quiet", "message", '{"text": "hi"}').exit_code == 0
    assert usage_json("quiet")["context_tokens"] is None
    assert invoke("usage", "nope").exit_code == 3


def expected_from_raw(path: Path) -> tuple[int | None, dict[str, int]]:
    """Independently of toka's parser: dedupe responses by message id + request id keeping the
    largest output, sum every response, and take the latest main-chain prompt."""
    responses: dict[tuple[str, str], dict[str, Any]] = {}
    context = None
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        message = rec.get("message")
        if rec.get("type") != "assistant" or not isinstance(message, dict) or "usage" not in message:
            continue
        if message.get("model") == "<synthetic>" or rec.get("isApiErrorMessage"):
            continue
        u = message["usage"]
        key = (message.get("id") or rec["uuid"], rec.get("requestId") or "")
        held = responses.get(key)
        if held is None or u.get("output_tokens", 0) > held.get("output_tokens", 0):
            responses[key] = u
        if not rec.get("isSidechain"):
            context = sum(
                u.get(n, 0) for n in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
            )
    totals = {
        "input_tokens": sum(u.get("input_tokens", 0) for u in responses.values()),
        "output_tokens": sum(u.get("output_tokens", 0) for u in responses.values()),
        "cache_creation_tokens": sum(u.get("cache_creation_input_tokens", 0) for u in responses.values()),
        "cache_read_tokens": sum(u.get("cache_read_input_tokens", 0) for u in responses.values()),
    }
    return context, totals


def main_transcripts() -> list[str]:
    folder = TRANSCRIPTS / "claude"
    if not folder.is_dir():
        return ["absent"]
    return sorted(p.name for p in folder.glob("*.jsonl"))


@pytest.mark.parametrize("name", main_transcripts())
def test_figures_of_each_claude_code_fixture_match_the_raw_file(name: str) -> None:
    path = shared_or_skip("fixtures", "transcripts", "claude", name)
    result = invoke("import", str(path), "--json")
    assert result.exit_code == 0, result.stderr
    sessions = json.loads(result.stdout)["sessions"]
    context, totals = expected_from_raw(path)
    for subagent in find_transcripts(path)[1:]:  # a session's file brings its subagents' files
        _, theirs = expected_from_raw(subagent)
        totals = {name_: totals[name_] + theirs[name_] for name_ in totals}
    figures = [usage_json(s) for s in sessions]
    latest = [f for f in figures if f["context_tokens"] is not None]
    if context is not None:
        assert context in [f["context_tokens"] for f in latest]
    for name_ in totals:
        assert sum(f[name_] for f in figures) == totals[name_], name_


def test_session_starts_model_with_the_1m_suffix_sets_the_window() -> None:
    """Claude Code's SessionStart hook names the model as chosen (`[1m]`); usage names it bare."""
    record("h", {"session_id": "h", "hook_event_name": "SessionStart", "model": "claude-sonnet-4-5[1m]"},
           kind="hook.session_start")  # fmt: skip
    record("h", anthropic(10, 0, 250_000, 5))
    figures = usage_json("h")
    assert (figures["context_window"], figures["window_source"], figures["fill_pct"]) == (1_000_000, "model", 25.0)
    with Client() as client:
        [session] = client.call("sessions.list")["sessions"]
    assert (session["context_window"], session["fill_pct"]) == (1_000_000, 25.0)


def test_an_agent_of_a_session_is_found_after_a_restart() -> None:
    """The daemon learns a session's agents from the log when asked about one it has not met."""
    record("s", anthropic(7, 9000, 0, 30), agent="explorer")
    assert invoke("daemon", "restart").exit_code == 0
    figures = usage_json("s/explorer")
    assert (figures["agent"], figures["context_tokens"], figures["calls"]) == ("s/explorer", 9007, 1)
