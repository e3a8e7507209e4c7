"""Handoffs of real transcripts: the files written and the latest to-do list, against values
read straight from the raw JSON lines (not through toka's importers)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from transcripts import raw_records, shared_or_skip

from daemon.handoff import Handoff, Subject, build_handoff
from daemon.ingest.formats import PARSERS, detect
from daemon.ingest.lines import ParseStats
from store.base import EventQuery
from store.ephemeral import EphemeralStore
from store.events import Event, parse_new_event

CLAUDE = [
    "codemie-ai__session-196820da.jsonl",
    "d-kimuson__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    "kesslerio__logs__chat.bbf59ca.6706089d-9d7e-4f48-bd2d-8f2a2546eb78.jsonl",
    "marot__fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl",
    "CoorpAcademy__logs__4f65f198-0c0c-47a2-b6ab-5f2e30ae5cbe__chat.jsonl",
]
CODEX_REAL = "codemie-ai__rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
CODEX_REDACTED = "madshn__rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
WRITERS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}


def imported(path: Path) -> list[Event]:
    """The file through toka's importer into a store, read back in log order."""
    fmt = detect(path)
    assert fmt is not None
    dicts = list(PARSERS[fmt](path, ParseStats()))

    async def load() -> list[Event]:
        store = EphemeralStore()
        await store.append([parse_new_event(d) for d in dicts])
        return await store.query(EventQuery())

    return asyncio.run(load())


def handoff_of(path: Path) -> Handoff:
    events = imported(path)
    return build_handoff(events, Subject(agent="main", session=events[-1].session, state="ACTIVE"))


def claude_blocks(path: Path) -> list[dict[str, Any]]:
    blocks = []
    for record in raw_records(path):
        content = (record.get("message") or {}).get("content") if isinstance(record.get("message"), dict) else None
        if isinstance(content, list):
            blocks += [b for b in content if isinstance(b, dict)]
    return blocks


@pytest.mark.parametrize("name", CLAUDE)
def test_claude_code_files_and_todos_match_the_raw_transcript(name: str) -> None:
    path = shared_or_skip("fixtures", "transcripts", "claude", name)
    blocks = claude_blocks(path)
    errors = {b["tool_use_id"]: b.get("is_error") is True for b in blocks if b.get("type") == "tool_result"}
    last_call: dict[str, str] = {}
    todos: list[dict[str, Any]] | None = None
    for block in blocks:
        if block.get("type") != "tool_use":
            continue
        tool, call_input = block.get("name"), block.get("input") or {}
        if tool in WRITERS and isinstance(call_input.get(WRITERS[tool]), str):
            last_call[call_input[WRITERS[tool]]] = block["id"]
        if tool == "TodoWrite" and isinstance(call_input.get("todos"), list):
            todos = call_input["todos"]
    expected_ok = {p: (None if i not in errors else not errors[i]) for p, i in last_call.items()}

    document = handoff_of(path)

    assert last_call, "the fixture has file writes"
    assert {f.path: f.ok for f in document.files} == expected_ok
    only_edited = {
        b["input"]["file_path"]
        for b in blocks
        if b.get("type") == "tool_use" and b.get("name") in ("Edit", "MultiEdit")
    } - {b["input"].get("file_path") for b in blocks if b.get("type") == "tool_use" and b.get("name") == "Write"}
    assert all(f.action == "modified" for f in document.files if f.path in only_edited)
    if todos is None:
        assert document.todos == ()
    else:
        assert [(t.text, t.status) for t in document.todos] == [(t["content"], t["status"]) for t in todos]
        done = sum(t["status"] == "completed" for t in todos)
        assert (document.progress.done, document.progress.total) == (done, len(todos))


def codex_items(path: Path) -> list[dict[str, Any]]:
    return [r["payload"] for r in raw_records(path) if isinstance(r.get("payload"), dict)]


def test_codex_apply_patch_files_and_plan_match_the_raw_rollout() -> None:
    path = shared_or_skip("fixtures", "transcripts", "codex", CODEX_REAL)
    items = codex_items(path)
    patched: dict[str, str] = {}
    plan = None
    for item in items:
        if item.get("type") == "custom_tool_call" and item.get("name") == "apply_patch":
            for line in item["input"].splitlines():
                found = re.match(r"\*\*\* (?:Add|Update|Delete) File: (.+)", line)
                if found:
                    patched[found.group(1).strip()] = item["call_id"]
        if item.get("type") == "function_call" and item.get("name") == "update_plan":
            plan = json.loads(item["arguments"])["plan"]
    # Codex reports each patch's outcome on its own line, apart from the tool output.
    applied = {i["call_id"]: i["success"] for i in items if i.get("type") == "patch_apply_end"}

    document = handoff_of(path)

    assert patched and plan
    assert {f.path: f.ok for f in document.files} == {p: applied[c] for p, c in patched.items()}
    assert {f.action for f in document.files} == {"modified"}
    assert [(t.text, t.status) for t in document.todos] == [(s["step"], s["status"]) for s in plan]
    assert [t.text for t in document.in_progress] == [s["step"] for s in plan if s["status"] == "in_progress"]
    tools = {t.tool: t.uses for t in document.tools}
    assert tools["apply_patch"] == sum(
        1 for i in items if i.get("type") == "custom_tool_call" and i.get("name") == "apply_patch"
    )
    assert document.original_request is not None
    assert document.original_request.text == "show tools"  # the AGENTS.md preamble is not a request


def test_codex_redacted_patches_and_plans_are_counted_but_not_listed() -> None:
    path = shared_or_skip("fixtures", "transcripts", "codex", CODEX_REDACTED)
    items = codex_items(path)
    calls = sum(1 for i in items if i.get("type") == "custom_tool_call" and i.get("name") == "apply_patch")

    document = handoff_of(path)

    assert calls > 0
    assert document.files == ()
    assert document.todos == ()
    assert {t.tool: t.uses for t in document.tools}["apply_patch"] == calls
