"""The window a session is read against is the one it had, not the most its model can take:
Claude Code runs claude-sonnet-4-6 and claude-opus-4-6 at 200k unless the user picks the 1M
option, so 1M comes only from evidence (a `[1m]` model, a prompt or compaction over 200k, the
agent's own figure); its default model, claude-opus-5-5, has 1M by its own status line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_support import invoke

from daemon.client.sync import Client
from daemon.client.transfer import import_files


def usage_json(session: str) -> dict[str, Any]:
    result = invoke("usage", session, "--json")
    assert result.exit_code == 0, result.stderr
    figures: dict[str, Any] = json.loads(result.stdout)
    return figures


def assistant(n: int, prompt: int, model: str = "claude-sonnet-4-6") -> dict[str, Any]:
    """A main-chain response of Claude Code 2.1 whose prompt is ``prompt`` tokens, nearly all cached."""
    return {
        "parentUuid": f"u{n - 1}" if n else None,
        "isSidechain": False,
        "type": "assistant",
        "uuid": f"u{n}",
        "sessionId": "sonnet-200k",
        "timestamp": f"2026-11-02T10:{n:02d}:00.000Z",
        "requestId": f"req-{n}",
        "cwd": "/work/app",
        "version": "2.1.332",
        "message": {
            "id": f"msg-{n}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": "ok"}],
            "usage": {
                "input_tokens": 3,
                "cache_creation_input_tokens": 1000,
                "cache_read_input_tokens": prompt - 1003,
                "output_tokens": 400,
                "service_tier": "standard",
                "speed": "standard",
            },
        },
    }


def compaction(n: int, pre_tokens: int) -> dict[str, Any]:
    return {
        "parentUuid": None,
        "logicalParentUuid": f"u{n - 1}",
        "isSidechain": False,
        "type": "system",
        "subtype": "compact_boundary",
        "content": "Conversation compacted",
        "uuid": f"u{n}",
        "sessionId": "sonnet-200k",
        "timestamp": f"2026-11-02T10:{n:02d}:00.000Z",
        "compactMetadata": {"trigger": "auto", "preTokens": pre_tokens},
    }


def lifecycle(session: str) -> list[tuple[str, str]]:
    with Client() as client:
        changes = [e for e in client.iter_events(session=session, kinds=["lifecycle"]) if e["agent"] == "main"]
        return [(c["payload"]["to"], client.call("events.get", id=c["payload"]["cause"])["kind"]) for c in changes]


def test_a_sonnet_4_6_session_is_warned_at_75_percent_of_200k_before_claude_code_compacts_it(tmp_path: Path) -> None:
    """The shape of the session that showed it: 83% of 200k reached, auto-compacted at 173k;
    WARNING must come with the response that crossed 150k, not after the compaction."""
    path = tmp_path / "sonnet-200k.jsonl"
    prompts = [40_000, 120_000, 152_000, 166_000]
    records = [assistant(n, prompt) for n, prompt in enumerate(prompts)] + [
        compaction(4, 173_004),
        assistant(5, 31_000),
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with Client() as client:
        import_files(client, [path])
    assert lifecycle("sonnet-200k")[:1] == [("WARNING", "usage")]
    with Client() as client:
        [first] = [c for c in client.iter_events(session="sonnet-200k", kinds=["lifecycle"])][:1]
        cause = client.call("events.get", id=first["payload"]["cause"])
    assert cause["payload"]["message_id"] == "msg-2"  # 152,000 of 200,000: 76%
    assert first["payload"]["context_window"] == 200_000
    figures = usage_json("sonnet-200k")
    assert (figures["context_window"], figures["window_source"]) == (200_000, "compaction")


def test_claude_4_models_default_to_200k_and_opus_5_5_to_1m() -> None:
    for session, model in (("s46", "claude-sonnet-4-6"), ("o46", "claude-opus-4-6"), ("o55", "claude-opus-5-5")):
        usage = {"model": model, "input_tokens": 10, "cache_read_tokens": 159_990, "output_tokens": 5}
        assert invoke("record", session, "usage", json.dumps(usage)).exit_code == 0
    read = {s: (f["context_window"], f["window_source"], f["fill_pct"]) for s in ("s46", "o46", "o55")
            for f in [usage_json(s)]}  # fmt: skip
    assert read == {"s46": (200_000, "table", 80.0), "o46": (200_000, "table", 80.0), "o55": (1_000_000, "table", 16.0)}


def test_the_1m_option_is_taken_from_the_model_the_hook_names() -> None:
    hook = {
        "session_id": "long",
        "hook_event_name": "SessionStart",
        "source": "startup",
        "model": "claude-sonnet-4-6[1m]",
    }
    assert invoke("record", "long", "hook.session_start", json.dumps(hook)).exit_code == 0
    usage = {"model": "claude-sonnet-4-6", "input_tokens": 10, "cache_read_tokens": 159_990, "output_tokens": 5}
    assert invoke("record", "long", "usage", json.dumps(usage)).exit_code == 0
    figures = usage_json("long")
    assert (figures["context_window"], figures["window_source"], figures["fill_pct"]) == (1_000_000, "model", 16.0)


def test_a_prompt_over_200k_is_evidence_of_the_1m_window() -> None:
    usage = {"model": "claude-opus-4-6", "input_tokens": 10, "cache_read_tokens": 249_990, "output_tokens": 5}
    assert invoke("record", "big", "usage", json.dumps(usage)).exit_code == 0
    figures = usage_json("big")
    assert (figures["context_window"], figures["window_source"], figures["fill_pct"]) == (1_000_000, "observed", 25.0)


def test_a_compaction_past_200k_is_evidence_of_the_1m_window() -> None:
    usage = {"model": "claude-opus-4-6", "input_tokens": 10, "cache_read_tokens": 39_990, "output_tokens": 5}
    boundary = {"trigger": "auto", "pre_tokens": 830_000}
    assert invoke("record", "c1m", "compaction", json.dumps(boundary)).exit_code == 0
    assert invoke("record", "c1m", "usage", json.dumps(usage)).exit_code == 0
    figures = usage_json("c1m")
    assert (figures["context_window"], figures["window_source"], figures["fill_pct"]) == (1_000_000, "observed", 4.0)


def test_the_1m_option_is_taken_from_the_model_the_status_line_names() -> None:
    """An older Claude Code's status line input: the model as chosen, no context_window."""
    line = {"session_id": "sl", "model": {"id": "claude-opus-4-6[1m]", "display_name": "Opus 4.6 (1M context)"}}
    assert invoke("record", "sl", "statusline", json.dumps(line)).exit_code == 0
    usage = {"model": "claude-opus-4-6", "input_tokens": 10, "cache_read_tokens": 159_990, "output_tokens": 5}
    assert invoke("record", "sl", "usage", json.dumps(usage)).exit_code == 0
    figures = usage_json("sl")
    assert (figures["context_window"], figures["window_source"], figures["fill_pct"]) == (1_000_000, "model", 16.0)
