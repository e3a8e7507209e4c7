"""Handoff documents: what a fresh agent needs to carry on where another stopped, built from the log.

``build`` folds a session's events into a :class:`~daemon.handoff.build.Handoff`; ``render``
turns one into markdown (for people), a continuation prompt (for the next agent) or JSON (for
scripts). Both are pure: no I/O, no store, no clock, so the same events always give the same
document and the same digest.
"""

from __future__ import annotations

from daemon.handoff.build import (
    HANDOFF_FORMAT,
    FileChange,
    Handoff,
    HandoffBuilder,
    Note,
    PendingCall,
    Progress,
    Request,
    Subject,
    Todo,
    ToolError,
    ToolState,
    build_handoff,
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
