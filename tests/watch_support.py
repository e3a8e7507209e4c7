"""A small Claude Code transcript written by the tests themselves, helpers to grow files, and
`toka watch` in a child process.

The records carry the fields toka reads (agent-formats.md, section 1): one user prompt, one
response written as two records whose output grows (as Claude Code writes a response block by
block), a tool call and its result, and a second response.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

SESSION = "7d0c6a52-3f1e-4c55-9a43-0d6f2b1f9e11"
# The `toka` console script of the interpreter running the tests.
TOKA = Path(sys.executable).parent / "toka"
PATIENCE = 15.0


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


class Watching:
    """`toka watch ARGS` in a child process; its stdout lines gathered as they come."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [str(TOKA), "watch", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        self.lines: queue.Queue[str | None] = queue.Queue()  # None: stdout closed, the watch ended
        self._stderr: list[str] = []
        assert self.process.stdout is not None and self.process.stderr is not None
        self._readers = [
            threading.Thread(target=self._gather, args=(self.process.stdout,), daemon=True),
            threading.Thread(target=self._stderr.extend, args=(self.process.stderr,), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _gather(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.put(line)
        self.lines.put(None)

    def next_lines(self, count: int, patience: float = PATIENCE) -> list[str]:
        """The next ``count`` lines; a watch that ended before printing them fails with its stderr."""
        lines = []
        for _ in range(count):
            line = self.lines.get(timeout=patience)
            if line is None:
                code = self.process.wait(PATIENCE)
                self._readers[1].join(PATIENCE)
                raise AssertionError(f"toka watch ended ({code}): {''.join(self._stderr)}")
            lines.append(line)
        return lines

    def stop(self) -> tuple[int, str]:
        """Interrupt it as Ctrl-C does; its exit code and everything it wrote on stderr."""
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(PATIENCE)
        for reader in self._readers:
            reader.join(PATIENCE)
        return code, "".join(self._stderr)

    def rest(self) -> list[str]:
        """After :meth:`stop`, the lines printed and not taken yet."""
        lines = []
        while not self.lines.empty():
            line = self.lines.get_nowait()
            if line is not None:
                lines.append(line)
        return lines
