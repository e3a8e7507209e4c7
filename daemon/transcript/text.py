"""The texts a handoff quotes: payload fields as text, cut to a length, and the user's requests.

A request is a user message that a person typed. Agent harnesses inject user messages too
(``meta`` messages, text that opens with an XML-style tag such as ``<command-name>`` or
``<environment_context>``, Codex's AGENTS.md preamble); those are not requests. Compression
scores requests by the same test (daemon/compress/engine.py).
"""

from __future__ import annotations

import json
import re
from typing import Any

from daemon.contract.kinds import Kind
from store.events import Event

# Harness-injected user text (slash-command output, reminders, Codex's environment context).
_INJECTED = re.compile(r"\s*(?:<|# AGENTS\.md instructions|\[Request interrupted|Caveat: The messages below)")


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit].rstrip()}… [+{len(text) - limit} chars]"


def text_of(value: Any) -> str:
    """A payload field as text: strings as they are, content blocks joined, anything else as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, list):  # content blocks, as some harnesses record tool output
        parts = [b.get("text", "") if isinstance(b, dict) else str(b) for b in value]
        return "\n".join(p for p in parts if isinstance(p, str))
    return json.dumps(value, ensure_ascii=False, default=str)


def is_request(event: Event) -> bool:
    """Whether ``event`` is a user message that a person typed (not one a harness injected)."""
    payload = event.payload
    if event.kind != Kind.MESSAGE or payload.get("role") != "user" or payload.get("meta") is True:
        return False
    text = payload.get("text")
    # A match and isspace, not strip(): no copy of a long prompt per message.
    return isinstance(text, str) and bool(text) and not text.isspace() and not _INJECTED.match(text)
