"""The session tables both SQL backends keep: what a batch of new events adds to them, as rows
to upsert (one per session: its count, first and last seq and time, head; counts per agent and
per kind), and their rows read back as :class:`SessionInfo`."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from store.base import SessionInfo
from store.events import Event


@dataclass(frozen=True, slots=True)
class Folded:
    sessions: list[list[Any]]  # [session, events, first_seq, last_seq, first_ts, last_ts, head]
    agents: list[tuple[str, str, int]]  # (session, agent, events)
    kinds: list[tuple[str, str, int]]  # (session, kind, events)


def fold(events: list[Event]) -> Folded:
    sessions: dict[str, list[Any]] = {}
    agents: dict[tuple[str, str], int] = defaultdict(int)
    kinds: dict[tuple[str, str], int] = defaultdict(int)
    for e in events:
        row = sessions.get(e.session)
        if row is None:
            sessions[e.session] = [e.session, 1, e.seq, e.seq, e.ts, e.ts, e.id]
        else:
            row[1] += 1
            row[3] = e.seq
            row[4] = min(row[4], e.ts)
            row[5] = max(row[5], e.ts)
            row[6] = e.id
        if e.agent is not None:
            agents[(e.session, e.agent)] += 1
        kinds[(e.session, e.kind)] += 1
    return Folded(
        list(sessions.values()),
        [(s, name, n) for (s, name), n in agents.items()],
        [(s, name, n) for (s, name), n in kinds.items()],
    )


def session_infos(
    rows: list[Any], agents: dict[str, dict[str, int]], kinds: dict[str, dict[str, int]]
) -> list[SessionInfo]:
    """Rows of the ``sessions`` table, with each session's counts per agent and per kind."""
    return [
        SessionInfo(
            session=row[0],
            events=row[1],
            first_seq=row[2],
            last_seq=row[3],
            first_ts=row[4],
            last_ts=row[5],
            head=row[6],
            agents=agents[row[0]],
            kinds=kinds[row[0]],
        )
        for row in rows
    ]
