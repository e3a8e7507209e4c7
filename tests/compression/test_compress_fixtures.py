"""Compression of real Claude Code transcripts to 37.5% of their size: every policy meets the target,
and the summaries keep the original request, the files changed and the latest to-dos, checked
against values read straight from the raw JSON lines (not through toka's importer)."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import pytest
from compress_support import estimate, stored
from transcripts import raw_records, shared_or_skip

from daemon.compress.engine import compress
from daemon.compress.model import Compression
from daemon.contract.policies import CompressionPolicy, choices_of
from daemon.ingest.formats import PARSERS, detect, expand
from daemon.ingest.lines import ParseStats
from store.events import Event

CLAUDE = [
    "codemie-ai__session-196820da.jsonl",
    "d-kimuson__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    "kesslerio__logs__chat.bbf59ca.6706089d-9d7e-4f48-bd2d-8f2a2546eb78.jsonl",
    "kesslerio__logs__chat.816b68a.c7428042-d9a9-4e9e-a71c-4433a8d202c0.jsonl",
    "marot__fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl",
    "CoorpAcademy__logs__4f65f198-0c0c-47a2-b6ab-5f2e30ae5cbe__chat.jsonl",
]
WRITERS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
# User text that Claude Code injects rather than a person typing it.
INJECTED = ("<", "[Request interrupted", "Caveat: The messages below")
TARGET_SHARE = 0.375


@functools.cache
def session_events(name: str) -> list[Event]:
    """The transcript's main session through toka's importer and a store, in log order."""
    path = shared_or_skip("fixtures", "transcripts", "claude", name)
    found = expand([path], "claude-code")[0]  # the session's own file (its subagents' follow it)
    fmt = detect(found)
    assert fmt == "claude-code"
    events = stored(list(PARSERS[fmt](found, ParseStats())))
    sessions: dict[str, int] = {}
    for event in events:
        sessions[event.session] = sessions.get(event.session, 0) + 1
    main = max(sessions, key=lambda s: sessions[s])
    return [e for e in events if e.session == main]


@functools.cache
def compressed(name: str, policy: str) -> tuple[Compression, int]:
    events = session_events(name)
    target = int(sum(estimate(e) for e in events) * TARGET_SHARE)
    return compress(events, policy=policy, target_tokens=target, tokens=estimate), target


def flat(text: str) -> str:
    return " ".join(text.split())


def raw_facts(name: str, session: str) -> tuple[str, dict[str, str], tuple[str, list[dict[str, Any]]] | None]:
    """From the raw lines of the session: the first request a person typed, every file written
    (path → the id of its last writing call), and the last TodoWrite (its id and its items)."""
    path = shared_or_skip("fixtures", "transcripts", "claude", name)
    request = None
    files: dict[str, str] = {}
    todos = None
    for record in raw_records(path):
        if record.get("sessionId") != session or not isinstance(record.get("message"), dict):
            continue
        content = record["message"].get("content")
        if record.get("type") == "user" and request is None and not record.get("isMeta"):
            if record.get("isCompactSummary"):
                continue
            texts = [content] if isinstance(content, str) else []
            if isinstance(content, list):
                texts = [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"]
            for text in texts:
                if text.strip() and not text.lstrip().startswith(INJECTED):
                    request = text
                    break
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            tool, call_input = block.get("name"), block.get("input") or {}
            if tool in WRITERS and isinstance(call_input.get(WRITERS[tool]), str):
                files[call_input[WRITERS[tool]]] = block["id"]
            if tool == "TodoWrite" and isinstance(call_input.get("todos"), list):
                todos = (block["id"], call_input["todos"])
    assert request is not None
    return request, files, todos


@pytest.mark.parametrize("policy", choices_of(CompressionPolicy))
@pytest.mark.parametrize("name", CLAUDE)
def test_every_policy_meets_the_target_on_a_real_transcript(name: str, policy: str) -> None:
    events = session_events(name)
    result, target = compressed(name, policy)

    assert result.tokens_before == sum(estimate(e) for e in events) > target
    assert result.tokens_after <= target
    assert result.ratio == round(result.tokens_after / result.tokens_before, 4) <= TARGET_SHARE
    assert result.tokens_saved == result.tokens_before - result.tokens_after > 0
    # The range is a prefix of the events, and the events after it are what stays verbatim.
    assert result.first_seq == events[0].seq and result.first_event == events[0].id
    in_range = [e for e in events if e.seq <= (result.last_seq or 0)]
    assert len(in_range) == result.events_in_range > 0
    assert result.last_event == in_range[-1].id
    assert set(result.kept_seqs) <= {e.seq for e in in_range}
    assert list(result.kept_seqs) == sorted(result.kept_seqs)
    if policy in ("fifo", "window"):
        assert result.kept_seqs == () and result.summarizer is None
        assert "\n" not in result.summary and result.summary.startswith(f"Dropped {result.events_in_range} events")
    else:
        assert result.summarizer is not None and result.summarizer.kind == "extractive"
        assert 0 < result.summary_tokens <= target * 0.25
    # Every blob the summary cites is listed, with the payload it stands for.
    by_seq = {e.seq: e for e in events}
    for elided in result.elided:
        assert elided.citation in result.summary
        assert by_seq[elided.seq].digest == elided.digest and by_seq[elided.seq].kind == elided.kind
        assert elided.size > 2048
    assert Compression.from_json(json.loads(json.dumps(result.to_json()))) == result


@pytest.mark.parametrize("policy", ["summarize", "importance"])
@pytest.mark.parametrize("name", CLAUDE)
def test_the_summary_keeps_the_request_the_files_and_the_todos(name: str, policy: str) -> None:
    events = session_events(name)
    result, _ = compressed(name, policy)
    request, files, todos = raw_facts(name, events[0].session)
    summary = flat(result.summary)
    # What the context holds verbatim: the kept events of the range and everything after it.
    verbatim = [e for e in events if e.seq > (result.last_seq or 0) or e.seq in result.kept_seqs]
    verbatim_calls = {e.payload.get("tool_use_id") for e in verbatim if e.kind == "tool.call"}
    first_user_seq = next(e.seq for e in events if e.kind == "message" and e.payload.get("role") == "user")

    assert first_user_seq <= (result.last_seq or 0)
    assert flat(request)[:300] in summary
    assert files, "the transcript writes files"
    for path, last_call in files.items():
        assert path in summary or last_call in verbatim_calls, path
    if todos is not None:
        todo_call, items = todos
        if todo_call not in verbatim_calls:
            for item in items:
                assert flat(item["content"])[:200] in summary
        done = sum(1 for item in items if item["status"] == "completed")
        assert todo_call in verbatim_calls or f"{done} of {len(items)} done" in summary


def test_the_large_payloads_of_a_real_transcript_are_cited_not_quoted() -> None:
    events = session_events(CLAUDE[2])
    result, _ = compressed(CLAUDE[2], "summarize")
    by_seq = {e.seq: e for e in events}

    assert result.elided, "the errors of this transcript carry outputs of several KB"
    for elided in result.elided:
        output = by_seq[elided.seq].payload.get("output")
        if isinstance(output, str):
            assert flat(output) not in summary_of(result)
        assert re.search(rf"\[blob {elided.digest} {elided.size}\]", result.summary)


def summary_of(result: Compression) -> str:
    return flat(result.summary)
