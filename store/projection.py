"""The session tables both SQL backends keep: what a batch of new events adds to them, as rows
to upsert (one per session: its count, first and last seq and time, head; counts per agent and
per kind), their rows read back as :class:`SessionInfo`, and the check, when a store opens, that
they still agree with the log."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from store.base import SessionInfo
from store.events import Event
from store.kinds import activity_sql, is_activity


@dataclass(frozen=True, slots=True)
class Folded:
    # [session, events, first_seq, last_seq, first_ts, last active ts or None, head]: the last
    # active time is the batch's latest event of the agent's own activity (store/kinds.py), None
    # when the batch holds none; an upsert then keeps the row's time (a new row takes first_ts)
    sessions: list[list[Any]]
    agents: list[tuple[str, str, int]]  # (session, agent, events)
    kinds: list[tuple[str, str, int]]  # (session, kind, events)


def fold(events: list[Event]) -> Folded:
    sessions: dict[str, list[Any]] = {}
    agents: dict[tuple[str, str], int] = defaultdict(int)
    kinds: dict[tuple[str, str], int] = defaultdict(int)
    for e in events:
        row = sessions.get(e.session)
        if row is None:
            sessions[e.session] = row = [e.session, 1, e.seq, e.seq, e.ts, None, e.id]
        else:
            row[1] += 1
            row[3] = e.seq
            row[4] = min(row[4], e.ts)
            row[6] = e.id
        if is_activity(e.kind):
            row[5] = e.ts if row[5] is None else max(row[5], e.ts)
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


# The sessions row of each session, from the log (both SQL backends refill the table with it): its
# last active time is that of its latest event of the agent's own activity, or, with none, of its
# first event (store/kinds.py says why).
SESSIONS_SQL = f"""SELECT session, count(*), min(seq), max(seq), min(ts),
       coalesce(max(CASE WHEN {activity_sql()} THEN ts END), min(ts)),
       (SELECT id FROM events l WHERE l.session = e.session ORDER BY seq DESC LIMIT 1)
FROM events e{{where}} GROUP BY session"""


# What opening a store compares, in one statement both SQL backends run: the log's last event
# against its session's row, whether any session row is left over an empty log, and whether
# usage events were counted while the usage table is empty. Each append updates the tables in
# its own transaction, so they drift from the log only when something ended between an upgrade's
# step and the rebuild after it (or someone edited the file): that leaves a table empty or behind
# at the log's end, which this sees in a few index lookups. A count of every event would see
# more, and costs seconds on a large log whose pages are not in memory.
AGREEMENT_SQL = """SELECT last.seq, last.id, s.last_seq, s.head,
    (SELECT count(*) FROM (SELECT 1 FROM sessions LIMIT 1) AS any_session),
    (SELECT count(*) FROM (SELECT 1 FROM session_kinds WHERE kind = 'usage' LIMIT 1) AS any_usage),
    (SELECT count(*) FROM (SELECT 1 FROM usage_buckets LIMIT 1) AS any_bucket)
FROM (SELECT 1 AS one) AS anchor
LEFT JOIN (SELECT seq, id, session FROM events ORDER BY seq DESC LIMIT 1) AS last ON true
LEFT JOIN sessions s ON s.session = last.session"""


def disagreement(row: tuple[Any, ...]) -> str | None:
    """What ``AGREEMENT_SQL``'s row shows to disagree with the log, or None when nothing does."""
    seq, event_id, last_seq, head, any_session, any_usage, any_bucket = row
    if seq is None:
        return "session rows over an empty log" if any_session else None
    if last_seq is None:
        return f"no session row holds the log's last event (seq {seq})"
    if (last_seq, head) != (seq, event_id):
        return f"the session row of the log's last event (seq {seq}) ends at seq {last_seq}"
    if any_usage and not any_bucket:
        return "usage events but no usage rows"
    return None
