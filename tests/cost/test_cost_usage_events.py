"""What usage events carry for pricing: Claude Code's one-hour cache writes, a revision's prompt, and
one reading of the two conventions (Anthropic's uncached input, OpenAI's input with cached in it)."""

from __future__ import annotations

import json
from pathlib import Path

from daemon.ingest.claude_code import parse_claude_code
from daemon.ingest.lines import ParseStats
from store.usage import PROMPT_CLASSES, UsageCounts, class_prompt, prompt_class, usage_counts


def assistant(uuid: str, output: int, split: dict[str, int] | None = None) -> str:
    usage = {
        "input_tokens": 4,
        "cache_creation_input_tokens": 300,
        "cache_read_input_tokens": 9000,
        "output_tokens": output,
    }
    if split is not None:
        usage["cache_creation"] = split
    record = {
        "type": "assistant",
        "uuid": uuid,
        "sessionId": "s",
        "timestamp": "2026-05-11T10:00:00.000Z",
        "requestId": "req-1",
        "message": {
            "id": "msg-1",
            "model": "claude-opus-4-6",
            "usage": usage,
            "content": [{"type": "text", "text": "x"}],
        },
    }
    return json.dumps(record)


def usage_events(path: Path) -> list[dict[str, object]]:
    return [e for e in parse_claude_code(path, ParseStats()) if e["kind"] == "usage"]


def test_one_hour_cache_writes_are_recorded_where_the_transcript_says_which(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(assistant("u1", 10, {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200}) + "\n")
    [event] = usage_events(path)
    payload = event["payload"]
    assert isinstance(payload, dict)
    assert (payload["cache_creation_tokens"], payload["cache_creation_1h_tokens"]) == (300, 200)


def test_without_the_split_no_one_hour_count_is_made_up(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(assistant("u1", 10) + "\n")
    [event] = usage_events(path)
    assert isinstance(event["payload"], dict) and "cache_creation_1h_tokens" not in event["payload"]


def test_a_revision_carries_the_prompt_of_its_response() -> None:
    from daemon.ingest.claude_code import ClaudeCodeParser

    parser = ClaudeCodeParser(Path("s.jsonl"), ParseStats())
    first = list(parser.feed(1, b"", json.loads(assistant("u1", 10))))
    first += list(parser.flush(end=False))
    later = list(parser.feed(2, b"", json.loads(assistant("u2", 50))))
    [revision] = [e for e in later if e["kind"] == "usage"]
    assert revision["payload"]["revision"] is True
    assert (revision["payload"]["output_tokens"], revision["payload"]["context_tokens"]) == (40, 9304)


def test_the_two_conventions_read_as_one() -> None:
    anthropic = {"input_tokens": 4, "cache_creation_tokens": 300, "cache_creation_1h_tokens": 200,
                 "cache_read_tokens": 9000, "output_tokens": 10}  # fmt: skip
    openai = {"input_tokens": 1000, "cached_input_tokens": 800, "output_tokens": 40, "context_tokens": 1040}
    revision = {"output_tokens": 40, "context_tokens": 9304, "revision": True}
    assert usage_counts(anthropic) == UsageCounts(1, 4, 10, 300, 200, 9000, 9304)
    assert usage_counts(openai) == UsageCounts(1, 200, 40, 0, 0, 800, 1000)
    assert usage_counts(revision) == UsageCounts(0, 0, 40, 0, 0, 0, 9304)
    assert usage_counts({"input_tokens": -5, "output_tokens": True}) == UsageCounts(1, 0, 0, 0, 0, 0, 0)


def test_prompt_classes_split_at_the_tier_starts() -> None:
    assert prompt_class(0) == 0
    assert prompt_class(200_000) == PROMPT_CLASSES.index(200_000)  # a tier applies above its start
    assert prompt_class(200_001) == PROMPT_CLASSES.index(200_000) + 1
    for index in range(len(PROMPT_CLASSES) + 1):
        assert prompt_class(class_prompt(index)) == index
