"""A small Claude Code transcript written by the tests themselves, and helpers to grow files.

The records carry the fields toka reads (agent-formats.md, section 1): one user prompt, one
response written as two records whose output grows (as Claude Code writes a response block by
block), a tool call and its result, and a second response.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION = "7d0c6a52-3f1e-4c55-9a43-0d6f2b1f9e11"


def _usage(output: int, prompt: int) -> dict[str, int]:
    return {
        "input_tokens": 4,
        "cache_creation_input_tokens": 200,
        "cache_read_input_tokens": prompt,
        "output_tokens": output,
    }


def _record(kind: str, uuid: str, second: int, **fields: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "sessionId": SESSION,
        "uuid": uuid,
        "timestamp": f"2026-03-01T10:00:{second:02d}.000Z",
        "cwd": "/work/app",
        "gitBranch": "main",
        "version": "2.0.14",
        **fields,
    }


def _assistant(uuid: str, second: int, message_id: str, block: dict[str, Any], output: int, prompt: int) -> dict:
    message = {
        "id": message_id,
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [block],
        "usage": _usage(output, prompt),
    }
    return _record("assistant", uuid, second, requestId=f"req-{message_id}", message=message)


def transcript() -> list[dict[str, Any]]:
    return [
        _record("user", "u1", 0, message={"role": "user", "content": "Why does login time out?"}),
        _assistant("a1", 1, "msg-1", {"type": "text", "text": "Let me look at the session code."}, 3, 12_000),
        _assistant(
            "a2",
            2,
            "msg-1",
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "auth.py"}},
            180,
            12_000,
        ),
        _record(
            "user",
            "u2",
            3,
            message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]},
        ),
        _assistant("a3", 4, "msg-2", {"type": "text", "text": "The timeout is 5 s; raising it."}, 95, 12_400),
    ]


def lines() -> list[bytes]:
    return [json.dumps(record).encode() + b"\n" for record in transcript()]


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)
        handle.flush()
