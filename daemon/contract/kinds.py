"""The kinds of events toka writes or reads apart, by name. A member is its string
(``Kind.SESSION_META == "session.meta"``), so events, queries and JSON hold the bare value; the
log takes any kind, and these are the ones toka's own code acts on. Which of them are toka's
own records rather than the agent's activity is the store's business (store/kinds.py,
``TOKA_KINDS``), since the store must not import the daemon."""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    # What the importers, the hooks and the OTLP receiver record of an agent's session.
    SESSION_META = "session.meta"
    MESSAGE = "message"
    THINKING = "thinking"
    BLOCK = "block"  # a content block of no kind of its own (an image)
    TOOL_CALL = "tool.call"
    TOOL_RESULT = "tool.result"
    USAGE = "usage"
    ERROR = "error"
    COMPACTION = "compaction"
    COMPACTION_SUMMARY = "compaction.summary"
    SUMMARY = "summary"
    SYSTEM = "system"  # a system record of the agent's (an error, an API error, a notice)
    RAW = "raw"  # a record no parser understood, kept as it was
    TURN_CONTEXT = "turn.context"  # Codex: the settings of a turn (model, cwd, approvals)
    EVENT = "event"  # Codex: an event message of no kind of its own
    STATUSLINE = "statusline"
    TELEMETRY = "telemetry"
    TELEMETRY_COUNTERS = "telemetry.counters"
    HOOK_SESSION_START = "hook.session_start"
    HOOK_SESSION_END = "hook.session_end"
    HOOK_PRE_COMPACT = "hook.pre_compact"
    HOOK_POST_COMPACT = "hook.post_compact"
    HOOK_USER_PROMPT_SUBMIT = "hook.user_prompt_submit"
    HOOK_AGENT_TURN_COMPLETE = "hook.agent_turn_complete"
    # What toka itself appends.
    AGENT_SPAWN = "agent.spawn"
    LIFECYCLE = "lifecycle"
    HANDOFF = "handoff"
    CONTEXT_INJECTED = "context.injected"  # what a hook's answer gave the agent
    COMPRESSION = "compression"
    ALERT = "alert"
    CHECKPOINT = "checkpoint"
    NOTE_DECISION = "note.decision"
    NOTE_REJECTED = "note.rejected"
    NOTE_ASSUMPTION = "note.assumption"
    NOTE_CONSTRAINT = "note.constraint"
    NOTE_DEPENDENCY = "note.dependency"
    NOTE_TODO = "note.todo"
    MEMORY_SET = "memory.set"
    MEMORY_DELETE = "memory.delete"
    POOL_PRESSURE = "pool.pressure"
    STATE_SET = "state.set"
    STATE_MACHINE = "state.machine"
    DEPS_ADD = "deps.add"
    DEPS_REMOVE = "deps.remove"


# The family prefix of the hooks' events (``hook.`` and the hook's name in snake case) and of notes.
HOOK_PREFIX = "hook."
NOTE_PREFIX = "note."
