"""Claude Code transcripts of large records, written by the tests themselves: many tool results
of the size real file reads reach, or one record larger than a request line among ordinary ones.

Each read is two lines: the assistant's ``Read`` call (line ``2n + 1``) and the user record with
its result (line ``2n + 2``), whose ``tool.result`` event has the key ``r{n}:0``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION = "5e0d9a3c-0b1e-4c55-9a43-0d6f2b1f9e11"
MiB = 1024 * 1024


def _record(kind: str, uuid: str, n: int, **fields: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "sessionId": SESSION,
        "uuid": uuid,
        "timestamp": f"2026-03-01T{10 + n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
        "cwd": "/work/app",
        "version": "2.0.14",
        **fields,
    }


def output(n: int, size: int) -> str:
    """The text read by read ``n``: ``size`` characters, different for every read."""
    line = f"{n:06d} def handler(request): return respond(request, status=200)\n"
    return (line * (size // len(line) + 1))[:size]


def read_lines(n: int, size: int) -> bytes:
    call = {"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {"file_path": f"src/m{n}.py"}}
    message = {
        "id": f"msg-{n}",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [call],
        "usage": {"input_tokens": 4, "cache_read_input_tokens": 1000 + n, "output_tokens": 20},
    }
    result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": output(n, size)}
    records = [
        _record("assistant", f"a{n}", n, requestId=f"req-{n}", message=message),
        _record("user", f"r{n}", n, message={"role": "user", "content": [result]}),
    ]
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def write_reads(path: Path, sizes: list[int]) -> Path:
    """A transcript of one read per size, in order."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        for n, size in enumerate(sizes):
            handle.write(read_lines(n, size))
    return path
