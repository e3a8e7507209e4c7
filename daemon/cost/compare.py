"""Toka's prices beside the agent's own: ``toka report session --compare telemetry``.

For each session and model, the requests the agent's telemetry reported (Claude Code's
``api_request``, with its ``cost_usd``) are priced with toka's table and set beside the sum of
what the agent said they cost, with the difference in percent. Both sides cover the same
requests, so a difference is a difference of prices (a stale or missing table entry shows here
first), never of coverage. ``metric_cost_usd`` is what the agent's ``cost.usage`` counter summed
for the session and model, from its ``telemetry.counters`` events (delta points added up; of
cumulative points, each series' latest): the agent's third figure, which can stop mid-session.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from daemon.contract.kinds import Kind
from daemon.cost.periods import day_range, time_zone
from daemon.cost.report import Filter
from daemon.cost.service import Costs
from daemon.cost.tally import Groups, Sums, usd
from store.base import EventQuery
from store.errors import UsageError
from store.usage import TELEMETRY, usage_origin, usage_row

AGAINST = ("telemetry",)
COST_METRIC = "claude_code.cost.usage"


@dataclass(frozen=True, slots=True)
class CompareRequest:
    """What the ``report.compare`` op takes."""

    against: str = "telemetry"
    since: str | None = None
    until: str | None = None
    timezone: str | None = None
    source: str | None = None
    project: str | None = None


def _pct(ours: float | None, theirs: float | None) -> float | None:
    if ours is None or theirs is None or not theirs:
        return None
    return round(100 * (ours - theirs) / theirs, 2)


def _counter_costs(points: list[dict[str, Any]], into: dict[tuple[str, str], Decimal], session: str) -> None:
    latest: dict[str, tuple[int, float]] = {}
    for point in points:
        if not isinstance(point, dict) or point.get("metric") != COST_METRIC:
            continue
        value = point.get("value")
        attributes: dict[str, Any] = point["attributes"] if isinstance(point.get("attributes"), dict) else {}
        found = attributes.get("model")
        model: str = found if isinstance(found, str) else ""
        if not isinstance(value, (int, float)):
            continue
        if point.get("temporality") == "cumulative":
            series = json.dumps([model, attributes, point.get("start_ns")], sort_keys=True, default=str)
            held = latest.get(series)
            stamp = point.get("time_ns")
            time: int = stamp if isinstance(stamp, int) else 0
            if held is None or held[0] <= time:
                latest[series] = (time, value)
                into[(session, "\0" + series)] = Decimal(str(value))  # replaced, not added
        else:
            into[(session, model)] += Decimal(str(value))


async def compare(costs: Costs, request: CompareRequest) -> dict[str, Any]:
    """The ``report.compare`` document (docs/json.md)."""
    if request.against not in AGAINST:
        raise UsageError(f"cannot compare against {request.against!r}", f"compare against: {', '.join(AGAINST)}")
    zone, zone_name = time_zone(request.timezone)
    days = day_range(request.since, request.until, zone, costs.core.clock())
    chosen = Filter(await costs.sources(), request.source, request.project)
    groups = Groups(costs.prices)
    theirs: dict[str, Decimal] = defaultdict(Decimal)
    unreported: dict[str, int] = defaultdict(int)
    sums: dict[str, Sums] = defaultdict(Sums)
    query = EventQuery(kinds=(Kind.USAGE, Kind.TELEMETRY_COUNTERS), since=days.start, until=days.end)
    counters: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    async for event in costs.core.store.scan(query):
        if not chosen.chooses(event.session):
            continue
        if event.kind == Kind.TELEMETRY_COUNTERS:
            _counter_costs(event.payload.get("points") or [], counters, event.session)
            continue
        if usage_origin(event.payload) != TELEMETRY:
            continue
        row = usage_row(event.ts, event.session, event.agent, event.payload)
        label = f"{event.session}\0{row.model}"
        groups.add(label, row)
        sums[label].add_row(row)
        cost = event.payload.get("cost_usd")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool):
            theirs[label] += Decimal(str(cost))
        else:
            unreported[label] += 1
    metric = _metric_by_label(counters)
    tallied = groups.tallies()
    rows: list[dict[str, Any]] = []
    for label in sorted(set(tallied.labels) | set(metric)):
        session, model = label.split("\0", 1)
        ours = tallied.labels[label].cost_usd if label in tallied.labels else None
        agent = usd(theirs[label]) if label in theirs else None
        counted = sums[label] if label in sums else Sums()
        line: dict[str, Any] = {"session": session, "model": model or None}
        rows.append(
            line
            | {name: value for name, value in counted.counts_json().items() if name != "telemetry_calls"}
            | {
                "toka_cost_usd": ours,
                "agent_cost_usd": agent,
                "difference_pct": _pct(ours, agent),
                "calls_without_cost": unreported[label],
                "metric_cost_usd": usd(metric[label]) if label in metric else None,
            }
        )
    ours_total = tallied.total.cost_usd if tallied.labels else None
    agent_total = usd(sum(theirs.values(), Decimal())) if theirs else None
    head: dict[str, Any] = {"report": "compare", "against": request.against, "timezone": zone_name}
    return (
        head
        | days.to_json()
        | {"source": chosen.source, "project": request.project, "prices": costs.prices.describe(), "rows": rows}
        | {
            "totals": {
                "calls": tallied.total.calls,
                "toka_cost_usd": ours_total,
                "agent_cost_usd": agent_total,
                "difference_pct": _pct(ours_total, agent_total),
            }
        }
    )


def _metric_by_label(counters: dict[tuple[str, str], Decimal]) -> dict[str, Decimal]:
    """The counter costs per session and model (cumulative series, kept apart until here, added in)."""
    found: dict[str, Decimal] = defaultdict(Decimal)
    for (session, key), value in counters.items():
        model = json.loads(key[1:])[0] if key.startswith("\0") else key
        found[f"{session}\0{model}"] += value
    return found
