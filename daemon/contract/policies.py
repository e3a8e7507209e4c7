"""The choices requests and settings name: how a session is compressed, what happens when a
spawned agent goes CRITICAL, and the kinds of notes a handoff document lists. Each is a
``StrEnum``, its members in the order help texts and completions list them."""

from __future__ import annotations

from enum import StrEnum

from daemon.contract.kinds import NOTE_PREFIX, Kind


class CompressionPolicy(StrEnum):
    """docs/compression.md: ``fifo`` drops the oldest, ``window`` keeps the latest turns whole,
    ``summarize`` replaces the old part with a summary, ``importance`` keeps what scores highest."""

    FIFO = "fifo"
    WINDOW = "window"
    SUMMARIZE = "summarize"
    IMPORTANCE = "importance"


# ``auto_compress`` takes a policy or this: no compression when the agent's context fills.
AUTO_COMPRESS_OFF = "off"


class OnCritical(StrEnum):
    """What the daemon does when a spawned agent goes CRITICAL (``lifecycle.on_critical``, or
    the agent's own ``--policy``): ``notify`` appends the lifecycle event only; ``handoff`` hands
    its work to a successor."""

    NOTIFY = "notify"
    HANDOFF = "handoff"


class NoteKind(StrEnum):
    """What ``toka note`` and the MCP tool take: each is recorded as a ``note.<kind>`` event,
    ``error`` as an ``error`` event, and the agent's next handoff document lists them all."""

    DECISION = "decision"
    REJECTED = "rejected"
    ASSUMPTION = "assumption"
    CONSTRAINT = "constraint"
    DEPENDENCY = "dependency"
    TODO = "todo"
    ERROR = "error"

    @property
    def event_kind(self) -> str:
        return Kind.ERROR.value if self is NoteKind.ERROR else NOTE_PREFIX + self.value


def choices_of(choices: type[StrEnum]) -> tuple[str, ...]:
    """The choices' strings in declared order, as settings, help texts and completions list them."""
    return tuple(member.value for member in choices)


def spoken(choices: type[StrEnum]) -> str:
    """``fifo, window, summarize or importance``: the choices as a help text lists them."""
    *first, last = choices_of(choices)
    return f"{', '.join(first)} or {last}" if first else last
