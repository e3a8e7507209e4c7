"""What a hook payload becomes, as the hook (toka_cli/hook.py) and the daemon's hook inbox
(daemon/ingest/inbox.py) both build it: the event's kind from the payload's
``hook_event_name``, and the key of a tool's event (docs/hooks.md, "One event per occurrence").
One definition, so that a payload recorded either way is the same event.

The hook imports this module on every tool call: it loads ``re`` only.
"""

from __future__ import annotations

import re

# The longest tool use id taken into a key; a longer one is no id Claude Code or Codex gives.
MAX_TOOL_USE_CHARS = 200


def hook_kind(name: object) -> str:
    """``PreToolUse`` -> ``hook.pre_tool_use``; names toka does not know yet are kept the same way."""
    if not isinstance(name, str) or not name.strip():
        return "hook.unknown"
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name.strip()).lower()
    return "hook." + (re.sub(r"[^a-z0-9_-]+", "_", snake).strip("_") or "unknown")


def tool_key(kind: str, payload: dict[str, object]) -> str | None:
    """The key of a tool's event (``hook.<event>:<tool_use_id>``: one of each kind per tool call,
    however many times a hook reports it); None when the payload names no tool use."""
    tool_use = payload.get("tool_use_id")
    if isinstance(tool_use, str) and 0 < len(tool_use) <= MAX_TOOL_USE_CHARS:
        return f"{kind}:{tool_use}"
    return None
