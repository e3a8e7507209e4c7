"""Events for the compression tests: written to a memory store and read back, and a token estimator.

A module of its own rather than a conftest.py: several test folders have one, and ``import
conftest`` names whichever was loaded last.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from store.base import EventQuery
from store.ephemeral import EphemeralStore
from store.events import Event, parse_new_event

SESSION = "fix-login-timeout"


def estimate(event: Event) -> int:
    """The tests' token estimator: a quarter of the payload's JSON, and a little for the envelope."""
    return len(json.dumps(event.payload)) // 4 + 4


def stored(dicts: list[dict[str, Any]]) -> list[Event]:
    """Event dicts (the shape ``events.append`` takes) appended to a store and read back in order."""

    async def load() -> list[Event]:
        store = EphemeralStore()
        await store.append([parse_new_event(d) for d in dicts])
        return await store.query(EventQuery())

    return asyncio.run(load())


def scripted(script: list[tuple[str, dict[str, Any]]], session: str = SESSION) -> list[Event]:
    """``(kind, payload)`` pairs as one session's events, a second apart."""
    start = 1_780_000_000
    return stored(
        [
            {"session": session, "agent": "main", "kind": kind, "ts": start + i, "payload": payload}
            for i, (kind, payload) in enumerate(script)
        ]
    )


def working_session(rounds: int = 12, secret: str = "") -> list[Event]:
    """A session in the shape the Claude Code importer writes: a request, a to-do list, reads,
    edits, a failing test run that is then fixed, a decision, chatter, and long tool output."""
    script: list[tuple[str, dict[str, Any]]] = [
        ("session.meta", {"source": "claude-code", "cwd": "/src/app"}),
        ("message", {"role": "user", "text": f"Fix the login timeout in auth/session.py {secret}".strip()}),
        (
            "tool.call",
            {
                "tool": "TodoWrite",
                "tool_use_id": "todo-1",
                "input": {
                    "todos": [
                        {"content": "Reproduce the timeout", "status": "completed", "activeForm": "Reproducing"},
                        {"content": "Raise the retry budget", "status": "in_progress", "activeForm": "Raising"},
                        {"content": "Add a regression test", "status": "pending", "activeForm": "Adding"},
                    ]
                },
            },
        ),
        ("tool.result", {"tool_use_id": "todo-1", "output": "Todos have been modified", "is_error": False}),
        ("note.decision", {"text": "Retry 3 times with backoff", "reason": "the upstream is flaky"}),
    ]
    for i in range(rounds):
        script += [
            ("message", {"role": "assistant", "text": f"Looking at part {i} of the session code. " * 3}),
            ("tool.call", {"tool": "Read", "tool_use_id": f"read-{i}", "input": {"file_path": f"auth/part_{i}.py"}}),
            ("tool.result", {"tool_use_id": f"read-{i}", "output": f"line {i}\n" * 400, "is_error": False}),
            (
                "tool.call",
                {
                    "tool": "Edit",
                    "tool_use_id": f"edit-{i}",
                    "input": {"file_path": f"auth/part_{i}.py", "old_string": "retries=1", "new_string": "retries=3"},
                },
            ),
            ("tool.result", {"tool_use_id": f"edit-{i}", "output": "The file has been updated.", "is_error": False}),
            ("tool.call", {"tool": "Bash", "tool_use_id": f"test-{i}", "input": {"command": "pytest -q tests/auth"}}),
            (
                "tool.result",
                {
                    "tool_use_id": f"test-{i}",
                    "output": "FAILED tests/auth/test_session.py::test_timeout\n" + "trace line\n" * 300
                    if i == 2
                    else "12 passed",
                    "is_error": i == 2,
                },
            ),
            ("usage", {"model": "claude-opus-4-6", "input_tokens": 10, "output_tokens": 300, "context_tokens": 9000}),
        ]
    script.append(("message", {"role": "user", "text": "Now add the regression test"}))
    script.append(("message", {"role": "assistant", "text": "Adding the regression test to tests/auth."}))
    return scripted(script)
