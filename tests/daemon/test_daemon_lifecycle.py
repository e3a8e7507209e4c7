"""Lifecycle on real transcripts: imported Claude Code sessions move their main agent to WARNING
and CRITICAL at the first response whose context crosses 75% and 90% of the window the model ran
with (Claude Code's default for it: genai-prices' window, read here directly, but 200k for the
Claude 4 models), as the raw JSON says; a restarted daemon rebuilds
the same states and figures from the log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from daemon_support import Spawner
from transcripts import TRANSCRIPTS, shared_or_skip

from daemon.client.transfer import import_files

DEFAULT_WINDOW = 200_000


def _window(model: str) -> int:
    """The window the model ran with when nothing says more: Claude Code gives its Claude 4
    models (Sonnet 4 to 4.6, Opus 4 to 4.8) 200k unless the user picks the 1M option; any other
    model its window by genai-prices' own lookup (toka reads a table generated from it)."""
    from genai_prices.data_snapshot import get_snapshot

    if model.startswith(("claude-sonnet-4", "claude-opus-4")):
        return DEFAULT_WINDOW
    try:
        return get_snapshot().find_provider_model(model, None, None, None)[1].context_window or DEFAULT_WINDOW
    except LookupError:
        return DEFAULT_WINDOW


def _main_chain_prompts(path: Path) -> dict[str, list[tuple[str, int, int]]]:
    """By session: (message id, prompt tokens, window of its model) of each main-chain response,
    in file order, read from the raw lines: one entry per message id and request id, synthetic
    and error records left out."""
    seen: set[tuple[str, str]] = set()
    prompts: dict[str, list[tuple[str, int, int]]] = {}
    for line in path.read_bytes().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        message = record.get("message")
        if record.get("type") != "assistant" or record.get("isSidechain") or not isinstance(message, dict):
            continue
        usage = message.get("usage")
        if not isinstance(usage, dict) or message.get("model") == "<synthetic>" or record.get("isApiErrorMessage"):
            continue
        response = (message.get("id"), record.get("requestId"))
        if response in seen:
            continue
        seen.add(response)
        prompt = sum(
            usage.get(name) or 0 for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        prompts.setdefault(record["sessionId"], []).append((message["id"], prompt, _window(message["model"])))
    return prompts


def _main_transcripts() -> list[Path]:
    if not TRANSCRIPTS.exists():
        return []
    folder = TRANSCRIPTS / "claude"
    return sorted(p for p in folder.glob("*.jsonl") if not p.name.startswith("agent-"))


def _first_over(prompts: list[tuple[str, int, int]], pct: float) -> str | None:
    """The first response over ``pct`` of the window of the model that answered it."""
    return next((mid for mid, prompt, window in prompts if 100 * prompt / window >= pct), None)


def _first_change_to(changes: list[dict[str, Any]], states: tuple[str, ...]) -> dict[str, Any] | None:
    return next((c for c in changes if c["payload"]["to"] in states), None)


@pytest.mark.parametrize("path", _main_transcripts() or [TRANSCRIPTS / "claude"], ids=lambda p: p.name[:40])
def test_imported_sessions_cross_thresholds_at_the_first_response_over_them(spawn: Spawner, path: Path) -> None:
    shared_or_skip("fixtures", "transcripts", "claude")
    by_session = _main_chain_prompts(path)
    if not by_session or any(p > w for prompts in by_session.values() for _, p, w in prompts):
        pytest.skip("no main-chain usage, or a prompt larger than its model's window, in this transcript")
    daemon = spawn()  # after the skips: a transcript that has nothing to check starts none
    with daemon.client() as client:
        import_files(client, [path])
        for session, prompts in by_session.items():
            changes = [e for e in client.iter_events(session=session, kinds=["lifecycle"]) if e["agent"] == "main"]

            def cause(change: dict[str, Any] | None) -> str | None:
                if change is None:
                    return None
                return str(client.call("events.get", id=change["payload"]["cause"])["payload"]["message_id"])

            assert cause(_first_change_to(changes, ("WARNING", "CRITICAL"))) == _first_over(prompts, 75), session
            assert cause(_first_change_to(changes, ("CRITICAL",))) == _first_over(prompts, 90), session


def test_some_fixture_crosses_the_warning_threshold() -> None:
    """The test above is not vacuous: at least one transcript's main agent goes WARNING."""
    shared_or_skip("fixtures", "transcripts", "claude")
    assert any(_first_over(prompts, 75) for p in _main_transcripts() for prompts in _main_chain_prompts(p).values())


def test_a_restarted_daemon_rebuilds_states_and_figures(spawn: Any) -> None:
    folder = shared_or_skip("fixtures", "transcripts", "claude")
    daemon = spawn()
    with daemon.client() as client:
        import_files(client, [folder])
        client.call("agents.spawn", type="scripted", model="claude-sonnet-4-5")
        agents = {a["id"]: a for a in client.call("agents.list")["agents"]}
        spawned = next(a for a in agents if a.startswith("scripted-"))
        client.call("agents.usage", agent=spawned, input_tokens=100, cache_read_tokens=170_000)
        client.call("agents.pause", agent=spawned)
        before = {a["id"]: (a["state"], a["fill_pct"]) for a in client.call("agents.list")["agents"]}
        sessions = sorted({agent.split("/")[0] for agent in agents if "/" in agent})
        usage_before = {s: client.call("usage", session=s) for s in sessions}
    daemon.stop()
    daemon = spawn()
    with daemon.client() as client:
        after = {a["id"]: (a["state"], a["fill_pct"]) for a in client.call("agents.list")["agents"]}
        usage_after = {s: client.call("usage", session=s) for s in usage_before}
    assert after == before
    assert before[spawned] == ("PAUSED", 85.0)
    assert usage_after == usage_before


def _traces_whose_agents_share_a_short_name() -> tuple[str, str]:
    """Two traces whose first `worker` gets the same 4-digit digest, found by search: with 16 bits,
    a few hundred traces hold such a pair."""
    from daemon.lifecycle.service import NAME_DIGITS
    from store.events import digest

    seen: dict[str, str] = {}
    for n in range(100_000):
        trace = f"trace-{n}"
        short = digest(f"{trace}/worker/1".encode())[:NAME_DIGITS]
        if short in seen:
            return seen[short], trace
        seen[short] = trace
    raise AssertionError("no two traces share a short name")


def test_agents_of_two_traces_whose_short_names_collide_are_both_spawned(spawn: Any) -> None:
    first_trace, second_trace = _traces_whose_agents_share_a_short_name()
    daemon = spawn()
    with daemon.client() as client:
        first = client.call("agents.spawn", type="worker", trace=first_trace)
        second = client.call("agents.spawn", type="worker", trace=second_trace)
        agents = {a["id"]: a for a in client.call("agents.list")["agents"]}
    assert (first["trace"], second["trace"]) == (first_trace, second_trace), (first, second)
    assert first["name"] != second["name"] and second["name"].startswith(first["name"]), (first, second)
    assert {first["id"], second["id"]} <= set(agents)
