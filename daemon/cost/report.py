"""Cost reports: usage by day, week or month, or by session, priced, with their totals.

A report reads the usage projection (``EventStore.usage_rows``: a row per quarter of an hour,
session, agent, model and prompt class), keeps the rows of the sessions its filters choose, sums
them per period (days, weeks from Monday, months of the report's time zone) or per session, and
prices the sums (daemon/cost/tally.py). Its document (docs/json.md) names the price table, the
time zone and the range it was made with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from daemon.cost.periods import PERIODS, Periods, Range
from daemon.cost.prices import PriceTable
from daemon.cost.tally import Groups, breakdown_json, tally_json, totals_json
from daemon.projects import in_project
from store.errors import UsageError
from store.events import format_ts
from store.usage import UsageRow

KINDS = (*PERIODS, "session", "blocks")
# Where usage comes from when no session.meta says so: toka's own clients (`toka agent usage`,
# `toka record`, the Python client).
OWN_SOURCE = "toka"


@dataclass(frozen=True, slots=True)
class ReportRequest:
    """What the ``report`` op takes (docs/cost.md)."""

    kind: str
    since: str | None = None
    until: str | None = None
    timezone: str | None = None
    source: str | None = None
    project: str | None = None
    breakdown: bool = False
    token_limit: int | str | None = None  # blocks: a token count, or "max" (the largest block's)
    cost_limit: float | str | None = None  # blocks: dollars, or "max"

    def checked(self) -> ReportRequest:
        if self.kind not in KINDS:
            raise UsageError(f"unknown report {self.kind!r}", f"reports: {', '.join(KINDS)}")
        return self


@dataclass(frozen=True, slots=True)
class SessionSource:
    """Where a session came from, as its first ``session.meta`` says: the agent that wrote it
    (``claude-code``, ``codex``; ``toka`` without one), its working directory, its repository."""

    source: str = OWN_SOURCE
    project: str | None = None
    repository: str | None = None

    @classmethod
    def of(cls, payload: dict[str, Any]) -> SessionSource:
        source = payload.get("source")
        cwd = payload.get("cwd")
        git = payload.get("git")
        url = git.get("repository_url") if isinstance(git, dict) else None
        repository = None
        if isinstance(url, str) and url.strip("/"):
            repository = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git") or None
        return cls(
            source if isinstance(source, str) and source else OWN_SOURCE,
            cwd if isinstance(cwd, str) and cwd else None,
            repository,
        )

    def in_project(self, wanted: str) -> bool:
        """``wanted`` is an absolute path the session ran in (or under), or the name of its
        folder or of its repository."""
        return in_project(self.project, wanted, self.repository)

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "project": self.project}


class Filter:
    """The sessions a report's ``source`` and ``project`` choose (and not those of ``without``:
    Claude's billing blocks leave Codex's sessions out, whose limits are its own)."""

    def __init__(
        self, sources: dict[str, SessionSource], source: str | None, project: str | None, without: str | None = None
    ) -> None:
        self.sources = sources
        self.source = source.lower() if source else None
        self.project = project
        self.without = without
        self._chosen: dict[str, bool] = {}

    def source_of(self, session: str) -> SessionSource:
        return self.sources.get(session) or SessionSource()

    def chooses(self, session: str) -> bool:
        chosen = self._chosen.get(session)
        if chosen is None:
            found = self.source_of(session)
            chosen = (
                (self.source is None or found.source == self.source)
                and (self.project is None or found.in_project(self.project))
                and (self.without is None or found.source != self.without)
            )
            self._chosen[session] = chosen
        return chosen

    @property
    def filtering(self) -> bool:
        """Whether it leaves some sessions out (so rows must be kept per session)."""
        return self.source is not None or self.project is not None or self.without is not None

    def rows(self, rows: list[UsageRow]) -> list[UsageRow]:
        if not self.filtering:
            return rows
        return [row for row in rows if self.chooses(row.session)]

    def to_json(self) -> dict[str, str | None]:
        return {"source": self.source, "project": self.project}


def period_report(
    request: ReportRequest, rows: list[UsageRow], prices: PriceTable, periods: Periods, zone: str, days: Range
) -> dict[str, Any]:
    """Usage per day, week or month."""
    groups = Groups(prices, breakdown=request.breakdown)
    groups.add_all(rows, lambda row: periods.of(row.bucket))
    tallied = groups.tallies()
    lines = []
    for label in sorted(tallied.labels):
        line = {"period": label} | tally_json(tallied.labels[label])
        if request.breakdown:
            line["breakdown"] = breakdown_json(groups, tallied.models[label])
        lines.append(line)
    return document(request, zone, days, prices, lines, totals_json(tallied.total))


def session_report(
    request: ReportRequest, rows: list[UsageRow], prices: PriceTable, chosen: Filter, zone: str, days: Range
) -> dict[str, Any]:
    """Usage per session, each with its source and project and its usage per agent (a subagent's
    calls are its parent session's, under its own agent)."""
    groups = Groups(prices, breakdown=request.breakdown, by_agent=True)
    groups.add_all(rows, lambda row: row.session)
    tallied = groups.tallies()
    lines = []
    for session, tally in sorted(tallied.labels.items(), key=lambda item: (item[1].last_ts or 0, item[0])):
        agents = sorted(tallied.agents[session].items(), key=lambda item: (-item[1].cost, item[0]))
        line = (
            {"session": session}
            | chosen.source_of(session).to_json()
            | {
                "first_ts": None if tally.first_ts is None else format_ts(tally.first_ts),
                "last_ts": None if tally.last_ts is None else format_ts(tally.last_ts),
            }
            | tally_json(tally)
            | {"usage_source": tally.usage_source}
            | {"agents": [{"agent": agent or None} | t.to_json() for agent, t in agents]}
        )
        if request.breakdown:
            line["breakdown"] = breakdown_json(groups, tallied.models[session])
        lines.append(line)
    return document(request, zone, days, prices, lines, totals_json(tallied.total))


def document(
    request: ReportRequest,
    zone: str,
    days: Range,
    prices: PriceTable,
    lines: list[dict[str, Any]],
    totals: dict[str, Any],
) -> dict[str, Any]:
    return (
        {"report": request.kind, "timezone": zone}
        | days.to_json()
        | {"source": request.source.lower() if request.source else None, "project": request.project}
        | {"prices": prices.describe(), "rows": lines, "totals": totals}
    )
