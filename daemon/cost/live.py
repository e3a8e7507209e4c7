"""What usage costs right now: today's cost, the active 5-hour block with its burn rate and
projection, and each agent's share of today; once (``cost.summary``, which the dashboard asks
for when its subscription brings usage) or as a stream (``cost.live``, `toka report blocks
--live`), sent again whenever usage commits and every ``refresh_s`` seconds besides (the time
left in a block runs down without any usage).

It is handed the cost component and the hub: the stream wakes on the hub's usage events, from
this daemon or, on a shared log, any other, and never reads a transcript.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

from daemon.component import Component
from daemon.core import Core
from daemon.cost.blocks import Limits, block_json
from daemon.cost.periods import day_range, offsets, time_zone
from daemon.cost.report import Filter
from daemon.cost.service import Costs
from daemon.cost.tally import Groups, tally_json
from daemon.rpc.hub import Subscription
from daemon.rpc.registry import Call
from store.events import format_ts
from store.usage import DAY_US

# Agents listed in a summary: today's costliest.
TOP_AGENTS = 20
# Usage that arrives together (an import, a burst of subagents) is answered with one summary.
COALESCE_S = 0.25


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    timezone: str | None = None
    source: str | None = None
    token_limit: int | str | None = None
    cost_limit: float | str | None = None
    refresh_s: float = 30.0  # cost.live: the longest between two summaries


class LiveCosts(Component):
    def __init__(self, core: Core, costs: Costs) -> None:
        self.costs = costs
        self.hub = core.hub

    async def summary(self, request: SummaryRequest) -> dict[str, Any]:
        costs = self.costs
        zone, zone_name = time_zone(request.timezone)
        now = costs.now()
        today = day_range("today", "today", zone, now / 1_000_000)
        chosen = Filter(await costs.sources() if request.source else {}, request.source, None)
        rows = await costs.sums(chosen, offsets(zone, today.start, today.end, now), DAY_US, sessions=True)
        groups = Groups(costs.prices)
        groups.add_all(rows, lambda row: f"{row.session}\0{row.agent}")
        tallied = groups.tallies()
        sources = await costs.sources()
        agents = []
        for label, tally in sorted(tallied.labels.items(), key=lambda item: (-item[1].cost, item[0]))[:TOP_AGENTS]:
            session, agent = label.split("\0")
            origin = sources[session].source if session in sources else "toka"
            last = None if tally.last_ts is None else format_ts(tally.last_ts)
            agents.append(
                {"session": session, "agent": agent or None, "source": origin, "last_ts": last} | tally.to_json()
            )
        found = await costs.active_block(request.source)
        block = None
        if found is not None:
            limits = costs.limits
            tokens = request.token_limit if request.token_limit is not None else limits.tokens or None
            cost = request.cost_limit if request.cost_limit is not None else limits.cost or None
            block = block_json(found[0], found[1], now, Limits.of(tokens, cost, []))
        return {
            "now": format_ts(now),
            "timezone": zone_name,
            "source": request.source,
            "prices": costs.prices.describe(),
            "today": {"date": today.to_json()["since"]} | tally_json(tallied.total),
            "block": block,
            "codex": await costs.codex_limits(),
            "agents": agents,
        }

    async def stream(self, request: SummaryRequest, call: Call) -> None:
        """A summary now, then again after each commit of usage (coalesced) and at least every
        ``refresh_s``, until the client hangs up."""
        subscription = self.hub.subscribe(None, ("usage",))
        closed = asyncio.create_task(call.closed.wait())
        try:
            await call.send({"id": call.request_id, "ok": True, "result": {"live": True}})
            while not call.closed.is_set():
                await call.send({"id": call.request_id, "summary": await self.summary(request)})
                subscription = await self._next(subscription, closed, max(request.refresh_s, 1.0))
        finally:
            closed.cancel()
            self.hub.unsubscribe(subscription)

    async def _next(self, subscription: Subscription, closed: asyncio.Task[Any], refresh_s: float) -> Subscription:
        """Wait for usage, the client leaving, or ``refresh_s``; the subscription to go on with."""
        usage = asyncio.create_task(subscription.queue.get())
        done, _ = await asyncio.wait({usage, closed}, timeout=refresh_s, return_when=asyncio.FIRST_COMPLETED)
        usage.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await usage
        if usage in done and closed not in done:
            await asyncio.sleep(COALESCE_S)
        while not subscription.queue.empty():
            subscription.queue.get_nowait()
        if subscription.overflowed:  # only wakes are wanted: start again rather than drop the client
            self.hub.unsubscribe(subscription)
            subscription = self.hub.subscribe(None, ("usage",))
        return subscription
