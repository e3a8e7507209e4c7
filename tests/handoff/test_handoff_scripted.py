"""A scripted session through every section of the handoff and each of its three renders."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from daemon.handoff import Handoff, Subject, build_handoff, first_request, render_json, render_markdown, render_prompt
from store.base import EventQuery
from store.ephemeral import EphemeralStore
from store.events import Event, parse_new_event

SESSION = "s2"
T0 = 1_773_480_600  # 2026-03-14T09:30:00Z


def stored(session: str, script: list[tuple[str, dict[str, Any]]]) -> list[Event]:
    async def load() -> list[Event]:
        store = EphemeralStore()
        await store.append(
            [
                parse_new_event({"session": session, "agent": "main", "kind": k, "ts": T0 + i, "payload": p})
                for i, (k, p) in enumerate(script)
            ]
        )
        return await store.query(EventQuery(session=session))

    return asyncio.run(load())


def call(tool: str, call_id: str, **call_input: Any) -> tuple[str, dict[str, Any]]:
    return "tool.call", {"tool": tool, "tool_use_id": call_id, "input": call_input}


def result(call_id: str, output: str, is_error: bool = False) -> tuple[str, dict[str, Any]]:
    return "tool.result", {"tool_use_id": call_id, "output": output, "is_error": is_error}


TODOS = [
    {"content": "Add retry wrapper", "status": "completed", "activeForm": "Adding retry wrapper"},
    {"content": "Make the slow-login test pass", "status": "in_progress", "activeForm": "Fixing the test"},
    {"content": "Document the backoff", "status": "pending", "activeForm": "Documenting"},
]
SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("message", {"role": "user", "text": "<command-name>/clear</command-name>"}),
    ("message", {"role": "user", "text": "Now make the login retry with backoff."}),
    ("note.decision", {"text": "Retry at most 3 times", "reason": "a login POST must not be replayed blindly"}),
    ("note.rejected", {"text": "Raise the timeout to 120s", "reason": "still hangs the UI"}),
    ("note.assumption", {"text": "The auth service is idempotent on connect errors"}),
    ("note.constraint", {"text": "No new dependencies"}),
    call("Write", "t1", file_path="src/retry.py", content="x" * 5000),
    result("t1", "File created successfully at: src/retry.py"),
    call("Edit", "t2", file_path="src/client.py", old_string="a", new_string="b"),
    result("t2", "String to replace not found in file." + " detail" * 200, is_error=True),
    call("Edit", "t3", file_path="src/client.py", old_string="timeout=None", new_string="timeout=t"),
    result("t3", "The file src/client.py has been updated."),
    call("Bash", "t4", command="pytest -q"),
    result("t4", "1 failed", is_error=True),
    call("TodoWrite", "t5", todos=TODOS),
    result("t5", "Todos have been modified successfully"),
    ("usage", {"model": "claude-sonnet-4-5", "input_tokens": 10, "output_tokens": 5}),
    ("message", {"role": "assistant", "text": "The retry wrapper is in; the slow-login test still fails."}),
    call("Bash", "t6", command="pytest -q tests/test_login.py"),
]
USAGE = {
    "session": SESSION,
    "model": "claude-sonnet-4-5",
    "context_tokens": 150_000,
    "context_window": 200_000,
    "window_source": "default",
    "fill_pct": 75.0,
    "input_tokens": 10,
    "output_tokens": 5,
    "cache_creation_tokens": 0,
    "cache_read_tokens": 0,
    "calls": 1,
    "last_usage_ts": None,
}
SUBJECT = Subject(
    agent="coder-1",
    session=SESSION,
    type="claude-code",
    role="coder",
    version=2,
    model="claude-sonnet-4-5",
    window=200_000,
    state="HANDOFF_PENDING",
    trace="t-login",
    predecessor="coder-0",
    reason="CONTEXT_WINDOW_EXHAUSTED",
)


@pytest.fixture(scope="module")
def earlier() -> list[Event]:
    return stored("s1", [("message", {"role": "user", "text": "Login times out after 30s; fix it."})])


@pytest.fixture(scope="module")
def events() -> list[Event]:
    return stored(SESSION, SCRIPT)


@pytest.fixture(scope="module")
def document(earlier: list[Event], events: list[Event]) -> Handoff:
    return build_handoff(events, SUBJECT, USAGE, original_request=first_request(earlier))


def test_requests_come_from_the_trace_and_the_session(document: Handoff, earlier: list[Event]) -> None:
    assert document.original_request is not None and document.original_request.event == earlier[0].id
    assert document.original_request.text == "Login times out after 30s; fix it."
    assert document.request is not None and document.request.text == "Now make the login retry with backoff."
    assert document.status is not None and document.status.text.startswith("The retry wrapper is in")


def test_without_an_earlier_request_the_sessions_first_is_the_original(events: list[Event]) -> None:
    document = build_handoff(events, SUBJECT)
    assert document.original_request is not None
    assert document.original_request.text == "Now make the login retry with backoff."  # not the /clear


def test_notes_sections(document: Handoff, events: list[Event]) -> None:
    assert [(n.text, n.reason, n.event) for n in document.decisions] == [
        ("Retry at most 3 times", "a login POST must not be replayed blindly", events[2].id)
    ]
    assert [n.text for n in document.rejected] == ["Raise the timeout to 120s"]
    assert [n.text for n in document.assumptions] == ["The auth service is idempotent on connect errors"]
    assert [n.text for n in document.constraints] == ["No new dependencies"]
    assert document.dependencies == ()


def test_files_tools_errors_and_progress(document: Handoff, events: list[Event]) -> None:
    files = {f.path: (f.action, f.writes, f.failed, f.ok, f.event) for f in document.files}
    assert files == {
        "src/retry.py": ("created", 1, 0, True, events[6].id),
        "src/client.py": ("modified", 2, 1, True, events[10].id),
    }
    assert [(t.text, t.status, t.active_form) for t in document.todos] == [
        (t["content"], t["status"], t["activeForm"]) for t in TODOS
    ]
    assert [t.text for t in document.in_progress] == ["Make the slow-login test pass"]
    assert [(c.tool, c.call_id, c.summary) for c in document.pending] == [
        ("Bash", "t6", "pytest -q tests/test_login.py")
    ]
    tools = {t.tool: t for t in document.tools}
    assert {name: (t.uses, t.failures) for name, t in tools.items()} == {
        "Bash": (2, 1),
        "Edit": (2, 1),
        "TodoWrite": (1, 0),
        "Write": (1, 0),
    }
    assert tools["Bash"].last_event == events[18].id
    edit_error = tools["Edit"].last_error
    assert edit_error is not None and edit_error.recovered and edit_error.event == events[9].id
    assert len(edit_error.text) < 400  # outputs are cut down
    assert [(e.tool, e.recovered) for e in document.errors] == [("Edit", True), ("Bash", False)]
    assert document.error_count == 2
    assert (document.progress.done, document.progress.total, document.progress.pct) == (1, 3, 33.3)
    assert document.usage == USAGE
    assert document.head == events[-1].id and document.events == len(SCRIPT)
    cited = {r["event"] for r in document.references()}
    assert {events[2].id, events[3].id, events[9].id, events[14].id, events[18].id} <= cited


def test_json_shape_is_pinned(document: Handoff) -> None:
    data = render_json(document)
    assert list(data) == [
        "format",
        "subject",
        "original_request",
        "task",
        "decisions",
        "rejected",
        "files",
        "files_omitted",
        "in_progress",
        "todos",
        "tools",
        "assumptions",
        "constraints",
        "dependencies",
        "errors",
        "usage",
        "progress",
        "references",
        "footer",
    ]
    assert data["format"] == 2
    assert data["subject"] == {
        "agent": "coder-1",
        "type": "claude-code",
        "role": "coder",
        "version": 2,
        "model": "claude-sonnet-4-5",
        "window": 200_000,
        "state": "HANDOFF_PENDING",
        "session": SESSION,
        "trace": "t-login",
        "predecessor": "coder-0",
        "reason": "CONTEXT_WINDOW_EXHAUSTED",
    }
    assert set(data["task"]) == {"request", "status", "state"}
    assert set(data["task"]["request"]) == {"text", "event", "ts"}
    assert data["task"]["request"]["ts"] == "2026-03-14T09:30:01.000000Z"
    assert set(data["decisions"][0]) == {"text", "reason", "event", "ts"}
    assert set(data["files"][0]) == {"path", "action", "tool", "writes", "failed", "ok", "event", "ts"}
    assert set(data["in_progress"]) == {"todos", "calls"}
    assert set(data["in_progress"]["calls"][0]) == {"tool", "call_id", "summary", "event", "ts"}
    assert set(data["todos"]) == {"event", "items"}
    assert set(data["todos"]["items"][0]) == {"text", "status", "active_form"}
    assert set(data["tools"][0]) == {"tool", "uses", "failures", "last_event", "last_ts", "last_error"}
    assert set(data["errors"]) == {"count", "items"}
    assert set(data["errors"]["items"][0]) == {"tool", "text", "summary", "event", "ts", "recovered"}
    assert data["progress"] == {"done": 1, "total": 3, "pct": 33.3, "state": "HANDOFF_PENDING"}
    assert set(data["references"][0]) == {"event", "section"}
    assert set(data["footer"]) == {"head", "head_seq", "events", "digest"}


def test_markdown_numbers_the_sections_it_has_and_omits_the_rest(document: Handoff) -> None:
    text = render_markdown(document)
    assert text.startswith('---\ntoka: "handoff"\n')
    front = text.split("---\n")[1]
    assert 'agent: "coder-1"' in front and 'predecessor: "coder-0"' in front
    assert f'digest: "{document.digest}"' in front
    titles = re.findall(r"^## (\d+)\. (.+)$", text, re.MULTILINE)
    assert [int(n) for n, _ in titles] == list(range(1, len(titles) + 1))
    assert [t for _, t in titles] == [
        "Original request",
        "Task and status",
        "Decisions",
        "Work completed",
        "Work in progress",
        "To-do list",
        "Tool state",
        "Assumptions and constraints",
        "Errors and recovery",
        "Token usage",
        "Task progress",
        "References",
    ]  # no dependencies were noted, so that section is left out
    assert "`src/retry.py`: created" in text and "- [~] Make the slow-login test pass" in text
    assert "x" * 500 not in text  # payloads are never copied whole
    assert document.digest in text.splitlines()[-1]


def test_prompt_holds_todos_decisions_and_paths_not_to_retry(document: Handoff) -> None:
    prompt = render_prompt(document)
    assert "taking over session `s2` of trace `t-login` from agent `coder-1` (version 2" in prompt
    assert "Login times out after 30s; fix it." in prompt
    assert "Make the slow-login test pass" in prompt and "Document the backoff" in prompt
    assert "Add retry wrapper" not in prompt  # done to-dos are not repeated
    decided = prompt.split("## Decided (do not revisit)")[1].split("##")[0]
    assert "Retry at most 3 times" in decided
    not_retry = prompt.split("## Paths not to retry")[1].split("##")[0]
    assert "Raise the timeout to 120s" in not_retry
    assert "Bash (pytest -q)" in not_retry
    assert "Edit" not in not_retry  # that failure was recovered
    assert "`src/client.py` (modified)" in prompt
    assert "## What to do first\nFinish the to-do in progress: Make the slow-login test pass" in prompt
    assert len(prompt) < 4000
