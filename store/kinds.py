"""What a list of kind patterns takes: ``message`` (that kind), ``tool.*`` (a family: ``tool`` and
``tool.call``, never ``toolbox``), ``!raw`` (every kind but that one). An event is taken when it
matches one wanted pattern (any, when none is named) and no left-out one. Pure functions, shared
by the store's queries (and their SQL) and by the client, which must know whether a filter takes
a kind it reads apart (a replay's lifecycle changes)."""

from __future__ import annotations


def kind_matches(kind: str, patterns: tuple[str, ...]) -> bool:
    for pattern in patterns:
        if pattern.endswith(".*"):
            if kind == pattern[:-2] or kind.startswith(pattern[:-1]):
                return True
        elif kind == pattern:
            return True
    return False


def split_kinds(patterns: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The kinds wanted and the kinds left out (written ``!raw``, ``!tool.*``): an event is taken
    when it matches one wanted kind (any, when none is named) and no left-out one."""
    wanted = tuple(p for p in patterns if not p.startswith("!"))
    left_out = tuple(p[1:] for p in patterns if p.startswith("!") and len(p) > 1)
    return wanted, left_out


def kind_taken(kind: str, patterns: tuple[str, ...]) -> bool:
    if not patterns:
        return True
    wanted, left_out = split_kinds(patterns)
    return (not wanted or kind_matches(kind, wanted)) and not kind_matches(kind, left_out)


# The kinds toka itself (or a person through toka) appends to a session: handoffs, notes,
# compressions, lifecycle changes, alerts, retention checkpoints, the memory pool's records and
# the agents it spawns. None of them is the agent at work, so none makes a session look active:
# a session's last-active time (``SessionInfo.last_ts``, by which sessions are listed) is the time
# of its latest event of any other kind, what importers, hooks and the OTLP receiver record from
# the agent; a session with none keeps the time of its first event.
TOKA_KINDS = (
    "handoff",
    "context.injected",
    "note.*",
    "compression",
    "lifecycle",
    "alert",
    "checkpoint",
    "memory.*",
    "pool.*",
    "agent.spawn",
)


def is_activity(kind: str) -> bool:
    """Whether an event of ``kind`` is the agent's own activity (not one of ``TOKA_KINDS``)."""
    return not kind_matches(kind, TOKA_KINDS)


def activity_sql(column: str = "kind") -> str:
    """``is_activity`` as an SQL condition on ``column``, the same in SQLite and PostgreSQL."""
    terms = []
    for pattern in TOKA_KINDS:
        if pattern.endswith(".*"):
            family = pattern[:-2]
            terms.append(f"{column} = '{family}' OR substr({column}, 1, {len(family) + 1}) = '{family}.'")
        else:
            terms.append(f"{column} = '{pattern}'")
    return "NOT (" + " OR ".join(terms) + ")"
