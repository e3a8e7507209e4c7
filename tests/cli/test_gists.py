"""One line per event, for people: each kind has its gist (toka_cli/gists.py), and no event of
a real transcript reads as raw JSON in the tables, the replay or the dashboard."""

from __future__ import annotations

import pytest
from transcripts import shared_or_skip

from daemon.client.sync import Client
from daemon.client.transfer import import_files
from toka_cli.gists import gist, tokens

# Kinds whose gist is shaped from their figures or fields, never their JSON.
SHAPED = ("usage", "lifecycle", "tool.call", "tool.result", "raw", "compaction", "session.meta", "turn.context")


def test_usage_reads_as_its_figures() -> None:
    payload = {"input_tokens": 157, "cache_read_tokens": 25_000, "cache_creation_tokens": 2_000, "output_tokens": 12}
    assert gist("usage", payload) == "in 157 · cache 27k · out 12"
    codex = {"input_tokens": 17_088, "cached_input_tokens": 3_456, "output_tokens": 350}
    assert gist("usage", codex) == "in 14k · cache 3.5k · out 350"  # OpenAI's input includes the cached part


def test_a_lifecycle_change_reads_as_from_to_and_fill() -> None:
    assert gist("lifecycle", {"from": "ACTIVE", "to": "WARNING", "fill_pct": 85.2}) == "ACTIVE → WARNING 85%"
    stopped = {"from": "CRITICAL", "to": "TERMINATED", "reason": "CONTEXT_WINDOW_EXHAUSTED"}
    assert gist("lifecycle", stopped) == "CRITICAL → TERMINATED (CONTEXT_WINDOW_EXHAUSTED)"


def test_tools_messages_hooks_and_raw_records_read_as_what_they_say() -> None:
    call = {"tool": "Bash", "input": {"command": "pytest -q", "description": "run tests"}, "tool_use_id": "t"}
    assert gist("tool.call", call) == "Bash: pytest -q"
    assert gist("tool.result", {"output": "3 passed", "is_error": False}) == "ok: 3 passed"
    assert gist("tool.result", {"output": "boom", "is_error": True}) == "failed: boom"
    assert gist("message", {"role": "user", "text": "fix the\nlogin"}) == "user: fix the login"
    hook = {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "/src/a.py"}}
    assert gist("hook.pre_tool_use", hook) == "PreToolUse Read: /src/a.py"
    progress = {"type": "progress", "record": {"type": "progress", "data": {"type": "hook_progress"}}}
    assert gist("raw", progress) == "raw progress: hook_progress"
    assert gist("compaction", {"trigger": "auto", "pre_tokens": 167_731}) == "auto compaction at 168k tokens"


def test_a_payload_not_in_its_kind_shape_falls_back_to_its_text() -> None:
    assert gist("usage", {"note": "no figures"}) == '{"note":"no figures"}'
    assert gist("lifecycle", {"text": 5}) == "? → ?"
    assert gist("my.kind", {"text": "a custom event"}) == "a custom event"
    assert len(gist("message", {"text": "x" * 500}, width=40)) == 40


def test_token_counts_read_at_a_glance() -> None:
    assert [tokens(n) for n in (157, 3_456, 27_400, 1_234_567)] == ["157", "3.5k", "27k", "1.2M"]


@pytest.mark.parametrize("source", ["claude", "codex"])
def test_no_event_of_a_real_transcript_reads_as_json(source: str, toka_home: object) -> None:
    folder = shared_or_skip("fixtures", "transcripts", source)
    files = sorted(p for p in folder.glob("*.jsonl") if p.stat().st_size < 3_000_000)[:3]
    kinds_seen: set[str] = set()
    with Client() as client:
        for session in sorted(import_files(client, files).sessions):
            for event in client.iter_events(session=session):
                kinds_seen.add(event["kind"])
                line = gist(event["kind"], event["payload"], width=200)
                if event["kind"] in SHAPED:
                    assert not line.startswith("{"), (event["kind"], line)
    assert {"usage", "tool.call", "tool.result"} <= kinds_seen


def test_what_a_hook_gave_the_agent_reads_as_what_and_when() -> None:
    given = {"hook": "SessionStart", "source": "compact", "why": "handoff", "handoff": "3f9c21d07a4e9b", "tokens": 812}
    assert gist("context.injected", given) == "gave the agent handoff 3f9c21d07a4e at SessionStart compact (812 tokens)"
    notice = {"hook": "UserPromptSubmit", "why": "notice", "tokens": 61, "cut": False}
    assert gist("context.injected", notice) == "gave the agent a notice at UserPromptSubmit (61 tokens)"
    recall = {"hook": "SessionStart", "source": "startup", "why": "recall", "tokens": 3000, "cut": True}
    expected = "gave the agent the folder's notes at SessionStart startup (3.0k tokens, cut)"
    assert gist("context.injected", recall) == expected
