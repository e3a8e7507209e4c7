"""What an event says, in one line a person reads: a gist per kind.

A usage event reads ``in 157 · cache 27k · out 12``, a lifecycle change ``ACTIVE → WARNING 85%``,
a tool call ``Bash: pytest -q``, a raw record its type (``raw progress: hook_progress``), rather
than their JSON. The CLI's tables and text replay and the TUI's timeline and recent list all show
events through :func:`gist`, so an event reads the same everywhere. A kind with no gist of its own
falls back to the payload's most telling text, else its compact JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from daemon.contract.kinds import HOOK_PREFIX, Kind

Payload = dict[str, Any]

# Keys whose value is the readable text of a payload, most telling first.
TEXT_KEYS = ("text", "content", "message", "summary", "output", "prompt", "command", "name", "title")
# Keys of a tool's input that say what the call does, most telling first.
INPUT_KEYS = ("command", "cmd", "file_path", "path", "pattern", "query", "url", "description", "prompt")


def tokens(n: int) -> str:
    """A token count people read at a glance: 157, 3.5k, 27k, 1.2M."""
    if n < 1_000:
        return str(n)
    if n < 10_000:
        return f"{n / 1_000:.1f}k"
    if n < 1_000_000:
        return f"{round(n / 1_000)}k"
    return f"{n / 1_000_000:.1f}M"


def _number(payload: Payload, *keys: str) -> int | None:
    """The sum of the integer figures ``keys`` name; None when there is none."""
    figures = [payload[k] for k in keys if isinstance(payload.get(k), int) and not isinstance(payload.get(k), bool)]
    return sum(figures) if figures else None


def _text(payload: Payload, keys: tuple[str, ...] = TEXT_KEYS) -> str | None:
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def plain_gist(payload: Payload) -> str:
    """The payload's most telling text, a tool and its input, else its compact JSON."""
    text = _text(payload)
    if text is None and isinstance(payload.get("tool"), str):
        details = payload.get("input", {k: v for k, v in payload.items() if k != "tool"})
        text = f"{payload['tool']} {_compact_json(details)}"
    return text if text is not None else _compact_json(payload)


def _usage(payload: Payload) -> str:
    parts = []
    cache = _number(payload, "cache_read_tokens", "cache_creation_tokens", "cached_input_tokens")
    fresh = _number(payload, "input_tokens")
    if fresh is not None and isinstance(payload.get("cached_input_tokens"), int):
        fresh = max(0, fresh - payload["cached_input_tokens"])  # OpenAI counts the cached part in the input
    for label, figure in (
        ("in", fresh),
        ("cache", cache),
        ("out", _number(payload, "output_tokens")),
    ):
        if figure is not None:
            parts.append(f"{label} {tokens(figure)}")
    line = " · ".join(parts) or plain_gist(payload)
    return f"{line} (revised)" if payload.get("revision") else line


def _lifecycle(payload: Payload) -> str:
    line = f"{payload.get('from') or '?'} → {payload.get('to') or '?'}"
    if isinstance(payload.get("fill_pct"), int | float):
        line += f" {payload['fill_pct']:.0f}%"
    if payload.get("reason"):
        line += f" ({payload['reason']})"
    return line


def _tool_input(value: Any) -> str:
    if isinstance(value, dict):
        return _text(value, INPUT_KEYS) or _compact_json(value)
    return value if isinstance(value, str) else _compact_json(value)


def _tool_call(payload: Payload) -> str:
    tool = payload.get("tool") or payload.get("name") or "tool"
    return f"{tool}: {_tool_input(payload.get('input'))}" if "input" in payload else str(tool)


def _tool_result(payload: Payload) -> str:
    failed = payload.get("is_error") is True or payload.get("ok") is False
    output = payload.get("output", payload.get("content"))
    text = output if isinstance(output, str) else "" if output is None else _compact_json(output)
    return f"{'failed' if failed else 'ok'}: {text}" if text else ("failed" if failed else "ok")


def _message(payload: Payload) -> str:
    text = _text(payload) or ""
    role = payload.get("role")
    return f"{role}: {text}" if isinstance(role, str) and role else text


def _hook(payload: Payload) -> str:
    name = payload.get("hook_event_name") or payload.get("type") or "hook"
    parts = [str(name)]
    if isinstance(payload.get("tool_name"), str):
        parts.append(f"{payload['tool_name']}: {_tool_input(payload.get('tool_input'))}")
    elif text := _text(payload, ("prompt", "message", "reason", "source", "last-assistant-message")):
        parts.append(text)
    return " ".join(parts)


def _raw(payload: Payload) -> str:
    record: Payload = payload["record"] if isinstance(payload.get("record"), dict) else {}
    kind = payload.get("type") or record.get("type") or "record"
    data: Payload = record["data"] if isinstance(record.get("data"), dict) else {}
    detail = data.get("type") or record.get("subtype") or record.get("operation")
    return f"raw {kind}: {detail}" if detail else f"raw {kind}"


def _compaction(payload: Payload) -> str:
    trigger = payload.get("trigger") or "compaction"
    line = f"{trigger} compaction" if trigger != "compaction" else "compaction"
    if isinstance(payload.get("pre_tokens"), int):
        line += f" at {tokens(payload['pre_tokens'])} tokens"
    if isinstance(payload.get("replacement_items"), int):
        line += f", {payload['replacement_items']} items kept"
    return line


def _compression(payload: Payload) -> str:
    first, last = payload.get("first_seq"), payload.get("last_seq")
    span = f"#{first}–#{last}" if first is not None else "nothing"
    line = f"{payload.get('policy') or 'compression'} {span}"
    before, after = _number(payload, "tokens_before"), _number(payload, "tokens_after")
    if before is not None and after is not None:
        line += f": {tokens(before)} → {tokens(after)} tokens"
    return line


def _handoff(payload: Payload) -> str:
    line = f"{payload.get('predecessor') or '?'} ⇒ {payload.get('successor') or 'a new agent'}"
    return line + (f" ({payload['reason']})" if payload.get("reason") else "")


def _injected(payload: Payload) -> str:
    """``gave the agent handoff 3f9c21d07a4e at SessionStart compact (812 tokens, cut)``."""
    what = {"handoff": "handoff", "notice": "a notice", "recall": "the folder's notes"}.get(str(payload.get("why")), "")
    if payload.get("why") == "handoff" and isinstance(payload.get("handoff"), str):
        what += f" {payload['handoff'][:12]}"
    hook = " ".join(str(payload[k]) for k in ("hook", "source") if isinstance(payload.get(k), str))
    line = f"gave the agent {what or 'context'}" + (f" at {hook}" if hook else "")
    size = [f"{tokens(payload['tokens'])} tokens"] if isinstance(payload.get("tokens"), int) else []
    size += ["cut"] if payload.get("cut") is True else []
    return line + (f" ({', '.join(size)})" if size else "")


def _spawn(payload: Payload) -> str:
    parts = [str(payload.get("type") or "agent")]
    if payload.get("version"):
        parts.append(f"v{payload['version']}")
    if payload.get("model"):
        parts.append(str(payload["model"]))
    if isinstance(payload.get("window"), int):
        parts.append(f"window {tokens(payload['window'])}")
    return "spawned " + " · ".join(parts)


def _meta(payload: Payload) -> str:
    source = payload.get("source") or payload.get("codex_source") or "session"
    version = payload.get("version") or payload.get("cli_version")
    parts = [f"{source} {version}" if version else str(source)]
    for key in ("cwd", "git_branch", "model"):
        if isinstance(payload.get(key), str):
            parts.append(payload[key])
    return " · ".join(parts)


def _turn_context(payload: Payload) -> str:
    parts = [str(payload[k]) for k in ("model", "cwd", "approval_policy") if isinstance(payload.get(k), str)]
    return " · ".join(parts) or plain_gist(payload)


def _memory_set(payload: Payload) -> str:
    return f"{payload.get('scope')}/{payload.get('key')} = {_compact_json(payload.get('value'))}"


def _memory_delete(payload: Payload) -> str:
    return f"{payload.get('scope')}/{payload.get('key')} deleted"


def _pressure(payload: Payload) -> str:
    line = f"pool {payload.get('from')} → {payload.get('to')}"
    used, capacity = payload.get("used_bytes"), payload.get("capacity_bytes")
    if isinstance(used, int) and isinstance(capacity, int) and capacity:
        line += f" {100 * used / capacity:.0f}%"
    return line


def _state_set(payload: Payload) -> str:
    line = f"{payload.get('machine')} {payload.get('entity')}: {payload.get('from')} → {payload.get('to')}"
    return line + (f" ({payload['reason']})" if payload.get("reason") else "")


def _event(payload: Payload) -> str:
    kind = payload.get("type") or "event"
    text = _text(payload, ("message", "text", "last_agent_message", "reason"))
    return f"{kind}: {text}" if text else str(kind)


def _system(payload: Payload) -> str:
    kind = payload.get("subtype") or "system"
    text = _text(payload)
    return f"{kind}: {text}" if text else str(kind)


GISTS: dict[str, Callable[[Payload], str]] = {
    Kind.USAGE: _usage,
    Kind.LIFECYCLE: _lifecycle,
    Kind.TOOL_CALL: _tool_call,
    Kind.TOOL_RESULT: _tool_result,
    Kind.MESSAGE: _message,
    Kind.RAW: _raw,
    Kind.COMPACTION: _compaction,
    Kind.COMPRESSION: _compression,
    Kind.HANDOFF: _handoff,
    Kind.CONTEXT_INJECTED: _injected,
    Kind.AGENT_SPAWN: _spawn,
    Kind.SESSION_META: _meta,
    Kind.TURN_CONTEXT: _turn_context,
    Kind.MEMORY_SET: _memory_set,
    Kind.MEMORY_DELETE: _memory_delete,
    Kind.POOL_PRESSURE: _pressure,
    Kind.STATE_SET: _state_set,
    Kind.EVENT: _event,
    Kind.SYSTEM: _system,
}


def gist(kind: str, payload: Payload, width: int = 100) -> str:
    """One line, at most ``width`` characters, that says what an event of ``kind`` is about."""
    shape = GISTS.get(kind) or (_hook if kind.startswith(HOOK_PREFIX) else plain_gist)
    try:
        text = shape(payload)
    except (TypeError, ValueError, AttributeError):  # a payload not in its kind's usual shape
        text = plain_gist(payload)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
