"""What each Claude Code record becomes: the payloads of its events, one record at a time.

Plain functions of a record, or of one of its content blocks, with no state: which record is
mapped to which event, and with which key, is the parser's (daemon/ingest/claude_code.py, whose
docstring lists the mapping).
"""

from __future__ import annotations

from typing import Any

from daemon.contract.kinds import Kind
from store.errors import InvalidEvent
from store.events import parse_ts

# An event's payload, as the parser builds it.
Payload = dict[str, Any]

SOURCE = "claude-code"
# Fields every conversation record carries; a system record's other fields are its detail.
_ENVELOPE = frozenset(
    {
        "type",
        "subtype",
        "content",
        "level",
        "uuid",
        "parentUuid",
        "logicalParentUuid",
        "sessionId",
        "timestamp",
        "isSidechain",
        "userType",
        "cwd",
        "gitBranch",
        "version",
        "slug",
        "entrypoint",
        "agentId",
        "isMeta",
    }
)


def timestamp(value: Any) -> str | None:
    """A record's ``timestamp`` when it is a valid ISO-8601 time, else None."""
    if not isinstance(value, str):
        return None
    try:
        parse_ts(value)
    except InvalidEvent:
        return None
    return value


def record_time(record: dict[str, Any]) -> str | None:
    """The time a record holds: its ``timestamp``, else its snapshot's (file-history snapshots
    carry theirs inside), else None."""
    found = timestamp(record.get("timestamp"))
    snapshot = record.get("snapshot")
    if found is None and isinstance(snapshot, dict):
        found = timestamp(snapshot.get("timestamp"))
    return found


def token_count(usage: dict[str, Any], name: str) -> int:
    """A count of ``usage``; 0 when it is missing or not a count."""
    value = usage.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_payload(usage: dict[str, Any], model: Any, response: tuple[str, str], record: dict[str, Any]) -> Payload:
    """The ``usage`` event of a response, (message id, request id)."""
    input_tokens = token_count(usage, "input_tokens")
    cache_creation = token_count(usage, "cache_creation_input_tokens")
    cache_read = token_count(usage, "cache_read_input_tokens")
    payload: Payload = {
        "model": model,
        "input_tokens": input_tokens,
        "output_tokens": token_count(usage, "output_tokens"),
        "cache_creation_tokens": cache_creation,
        "cache_read_tokens": cache_read,
        "context_tokens": input_tokens + cache_creation + cache_read,
        "message_id": response[0],
        "request_id": response[1] or None,
        "sidechain": record.get("isSidechain") is True,
    }
    split = usage.get("cache_creation")
    if isinstance(split, dict):  # which cache writes are kept for an hour: they cost more
        payload["cache_creation_1h_tokens"] = token_count(split, "ephemeral_1h_input_tokens")
    if isinstance(usage.get("speed"), str):  # "fast": served in fast mode, billed at a premium
        payload["speed"] = usage["speed"][:16]
    return payload


def has_meta(record: dict[str, Any]) -> bool:
    return any(isinstance(record.get(name), str) for name in ("cwd", "gitBranch", "version"))


def meta_payload(record: dict[str, Any]) -> Payload:
    return {
        "source": SOURCE,
        "cwd": record.get("cwd"),
        "git_branch": record.get("gitBranch"),
        "version": record.get("version"),
    }


def message_payload(role: str, text: str, record: dict[str, Any]) -> Payload:
    payload: Payload = {"role": role, "text": text}
    if record.get("isMeta") is True:
        payload["meta"] = True
    return payload


def content_text(content: Any) -> str:
    """A string content as it is; the text blocks of a list joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def block_payload(role: str, block: Any, record: dict[str, Any]) -> tuple[str, Payload]:
    """(kind, payload) of the event of one content block of a ``role`` message."""
    kind = block.get("type") if isinstance(block, dict) else None
    if not isinstance(block, dict):
        return Kind.BLOCK, {"role": role, "type": None, "block": block}
    if kind == "text":
        text = block.get("text")
        return Kind.MESSAGE, message_payload(role, text if isinstance(text, str) else "", record)
    if kind == "thinking":
        text = block.get("thinking")
        thinking: Payload = {"text": text if isinstance(text, str) else ""}
        if "signature" in block:
            thinking["signature"] = block["signature"]
        if not thinking["text"]:
            thinking["hidden"] = True
        return Kind.THINKING, thinking
    if kind == "redacted_thinking":
        return Kind.THINKING, {"text": "", "redacted": True}
    if kind in ("tool_use", "server_tool_use"):
        call: Payload = {"tool": block.get("name"), "tool_use_id": block.get("id"), "input": block.get("input")}
        if kind == "server_tool_use":
            call["server"] = True
        return Kind.TOOL_CALL, call
    if kind == "tool_result":
        return Kind.TOOL_RESULT, {
            "tool_use_id": block.get("tool_use_id"),
            "output": content_text(block.get("content")),
            "is_error": block.get("is_error") is True,
        }
    return Kind.BLOCK, {"role": role, "type": kind, "block": block}


def boundary_payload(record: dict[str, Any]) -> Payload:
    """The ``compaction`` event of a ``compact_boundary`` system record."""
    meta = record.get("compactMetadata")
    meta = meta if isinstance(meta, dict) else {}
    return {
        "trigger": meta.get("trigger"),
        "pre_tokens": meta.get("preTokens"),
        "logical_parent": record.get("logicalParentUuid"),
    }


def system_payload(record: dict[str, Any]) -> Payload:
    """The ``system`` event of any other system record: its fields past the envelope are its detail."""
    return {
        "subtype": record.get("subtype"),
        "content": record.get("content"),
        "level": record.get("level"),
        "detail": {k: v for k, v in record.items() if k not in _ENVELOPE},
    }
