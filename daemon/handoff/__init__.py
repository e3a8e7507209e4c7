"""Handoff documents: what a fresh agent needs to carry on where another stopped, built from the log.

``document`` is the :class:`~daemon.handoff.document.Handoff` and its sections; ``build`` folds a
session's events into one, reading texts and tool calls through ``text`` and ``calls``; ``render``
turns one into markdown (for people), a continuation prompt (for the next agent) or JSON (for
scripts). All are pure: no I/O, no store, no clock, so the same events always give the same
document and the same digest. ``service`` is the daemon's side: handoffs built from an agent's
session, stored in the log and checked against it.
"""

from __future__ import annotations

from daemon.handoff.build import HandoffBuilder, build_handoff
from daemon.handoff.document import (
    HANDOFF_FORMAT,
    FileChange,
    Handoff,
    Note,
    PendingCall,
    Progress,
    Request,
    Subject,
    Todo,
    ToolError,
    ToolState,
    document_digest,
    first_request,
)
from daemon.handoff.render import render_json, render_markdown, render_prompt

__all__ = [
    "HANDOFF_FORMAT",
    "FileChange",
    "Handoff",
    "HandoffBuilder",
    "Note",
    "PendingCall",
    "Progress",
    "Request",
    "Subject",
    "Todo",
    "ToolError",
    "ToolState",
    "build_handoff",
    "document_digest",
    "first_request",
    "render_json",
    "render_markdown",
    "render_prompt",
]
