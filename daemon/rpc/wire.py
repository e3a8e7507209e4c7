"""Store results as the JSON the protocol sends (shapes documented in docs/json.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from daemon.contract import results
from daemon.contract.fill import ContextFill
from daemon.contract.results_cost import Counts
from store.base import DatabaseCheck, SessionInfo, Stats, VerifyReport
from store.events import format_ts


@dataclass(frozen=True, slots=True)
class RawJson:
    """A result that is JSON text already: the server writes it into the answer as it is."""

    text: str


def session_json(
    info: SessionInfo, meta: dict[str, Any] | None, fill: ContextFill | None, usage: Counts
) -> results.Session:
    """A session's counts, with where it came from (its first ``session.meta`` payload), how
    full its context is (of ``daemon.agents.usage.latest_context``; those fields are null when
    unknown), and its usage and cost."""
    return {
        "session": info.session,
        "events": info.events,
        "first_seq": info.first_seq,
        "last_seq": info.last_seq,
        "first_ts": format_ts(info.first_ts),
        "last_ts": format_ts(info.last_ts),
        "head": info.head,
        "agents": info.agents,
        "kinds": info.kinds,
        "source": _text(meta, "source"),
        "project": _text(meta, "cwd"),
        "model": None if fill is None else fill["model"],
        "context_tokens": None if fill is None else fill["context_tokens"],
        "context_window": None if fill is None else fill["context_window"],
        "fill_pct": None if fill is None else fill["fill_pct"],
        "usage": usage,
    }


def _text(payload: dict[str, Any] | None, name: str) -> str | None:
    value = None if payload is None else payload.get(name)
    return value if isinstance(value, str) and value else None


def verify_json(report: VerifyReport, database: DatabaseCheck | None = None) -> dict[str, Any]:
    """The chain's report, with the database's own check (its problems first) when it ran."""
    if database is not None:
        report = database.merged(report)
    return {
        "ok": report.ok,
        "session": report.session,
        "events": report.events,
        "problem_count": report.problem_count,
        "problems": [
            {"seq": p.seq, "id": p.id, "session": p.session, "what": p.what, "detail": p.detail}
            for p in report.problems
        ],
        "database": None if database is None else database_check_json(database),
    }


def database_check_json(check: DatabaseCheck) -> dict[str, Any]:
    return {
        "check": check.check,
        "ok": check.ok,
        "found": list(check.found),
        "tip": None if check.tip is None else check.tip.to_json(),
        "damaged": None if check.damaged is None else check.damaged.to_json(),
    }


def stats_json(stats: Stats) -> results.Stats:
    return {
        "events": stats.events,
        "sessions": stats.sessions,
        "blobs": stats.blobs,
        "payload_bytes": stats.payload_bytes,
        "blob_bytes": stats.blob_bytes,
        "stored_bytes": stats.stored_bytes,
        "disk_bytes": stats.disk_bytes,
        "dedup_ratio": round(stats.dedup_ratio, 3),
    }
