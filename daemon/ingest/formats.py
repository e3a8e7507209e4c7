"""Which importer reads a file: named by the caller, or told by the file's first record."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from daemon.ingest.claude_code import ClaudeCodeParser, parse_claude_code
from daemon.ingest.codex import CodexParser, parse_codex
from daemon.ingest.lines import ParseStats, read_records
from daemon.ingest.parser import ParserFactory
from daemon.ingest.toka import TokaParser, parse_toka
from daemon.ingest.transcripts import find_transcripts
from store.errors import NotFound, UsageError

Parser = Callable[[Path, ParseStats], Iterator[dict[str, Any]]]
PARSERS: dict[str, Parser] = {"toka": parse_toka, "claude-code": parse_claude_code, "codex": parse_codex}
# The same parsers, record by record, for files that are followed as they grow.
FOLLOWERS: dict[str, ParserFactory] = {"toka": TokaParser, "claude-code": ClaudeCodeParser, "codex": CodexParser}
FORMATS = ("auto", *PARSERS)

_CODEX_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
# How many records detection looks at before giving up (leading blank or bad lines are skipped).
_DETECT_RECORDS = 20


def detect(path: Path, *, empty: str | None = "toka") -> str | None:
    """The format of a JSON-lines file from its first records, or None when none fits.

    A file with no record at all (empty, or only bad lines) reads as ``empty``: by default
    toka's own format, whose importer then reports each bad line.
    """
    scratch = ParseStats()
    count = -1
    for count, (_, _, record) in enumerate(read_records(path, scratch)):
        if "projectHash" in record:
            return None  # Gemini CLI's session (its sessionId is no Claude Code record's)
        if "session" in record and "kind" in record:
            return "toka"
        if record.get("type") in _CODEX_TYPES and "payload" in record:
            return "codex"
        if "id" in record and "instructions" in record:
            return "codex"  # the rollout format before the envelope
        if "uuid" in record or record.get("type") == "summary":
            return "claude-code"
        if "sessionId" in record and isinstance(record.get("type"), str):
            return "claude-code"  # a record without uuid: queue-operation, a hook's progress
        if count + 1 >= _DETECT_RECORDS:
            break
    return empty if count < 0 else None


def expand(paths: Iterable[Path], fmt: str) -> list[Path]:
    """Files as given (a Claude Code session with its ``<session>/subagents/`` files), and the
    *.jsonl files under folders, main transcripts before their subagents, each once; NotFound
    for a path that does not exist."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", f"use one of: {', '.join(FORMATS)}")
    files: list[Path] = []
    for path in paths:
        if not path.exists():
            raise NotFound(f"no file or folder at {path}", "check the path")
        files += find_transcripts(path)  # subagent files after their session
    return list(dict.fromkeys(files))
