"""Claude Code's status line in one round trip: record its input, answer with what the line shows.

`toka statusline` (toka_cli/statusline.py) sends the input as the ``statusline`` event it
becomes; the answer comes once the event is committed and the lifecycle has taken in the window
it reports: the session's model, context fill and headroom (as ``toka usage`` gives it: the
agent's own figure of the moment when the input carries ``context_window``, else the main chain's
latest prompt), its state, what the session cost so far, and the active 5-hour block
of its source with its cost and time left. It is handed the core, the lifecycle's directory and
agents (for the fill and the state) and the cost component (for the costs).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from daemon.agents.directory import Directory
from daemon.agents.model import Agents
from daemon.agents.usage import MAIN_AGENT, latest_context
from daemon.component import Component
from daemon.contract.fill import headroom_tokens
from daemon.contract.kinds import Kind
from daemon.core import Core
from daemon.cost.report import Filter
from daemon.cost.service import Costs
from daemon.cost.tally import Groups, Tally
from store.errors import UsageError
from store.events import format_ts, parse_new_event
from store.usage import DAY_US

KIND = Kind.STATUSLINE


@dataclass(frozen=True, slots=True)
class StatusLineRequest:
    event: dict[str, Any]  # the status line input as the event it becomes, as events.append takes it


class StatusLine(Component):
    def __init__(
        self,
        core: Core,
        directory: Directory,
        agents: Agents,
        evaluated: Callable[[int], Awaitable[None]],
        costs: Costs,
    ) -> None:
        self.core = core
        self.directory = directory
        self.agents = agents
        self.evaluated = evaluated
        self.costs = costs

    async def answer(self, request: StatusLineRequest) -> dict[str, Any]:
        event = parse_new_event(request.event)
        if event.kind != KIND:
            raise UsageError(f"a status line event is of kind {KIND.value!r}, not {event.kind!r}")
        [result] = await self.core.append([event])
        await self.evaluated(result.event.seq)
        session = event.session
        figures = await latest_context(self.core.store, session)
        window, source = self.directory.window_of(figures)
        main = self.agents.get(session, MAIN_AGENT)
        sources = await self.costs.sources()
        agent_source = sources[session].source if session in sources else None
        spent = await self.session_cost(session)
        found = await self.costs.active_block(agent_source)
        block = None
        if found is not None:
            started, tally = found
            now = self.costs.now()
            block = {
                "start": format_ts(started.start),
                "end": format_ts(started.end),
                "remaining_minutes": round((started.end - now) / 60_000_000, 1),
                "total_tokens": tally.total_tokens,
                "cost_usd": tally.cost_usd,
                "unpriced_calls": tally.unpriced_calls,
            }
        context = figures.context_tokens
        return {
            "session": session,
            **figures.context_fill(window, source),
            "headroom_tokens": headroom_tokens(context, window),
            "state": None if main is None else main.state,
            "source": agent_source,
            "session_cost": {"calls": spent.calls, "cost_usd": spent.cost_usd, "unpriced_calls": spent.unpriced_calls},
            "block": block,
            "prices": self.costs.prices.describe(),
        }

    async def session_cost(self, session: str) -> Tally:
        groups = Groups(self.costs.prices)
        for row in await self.costs.sums(Filter({}, None, None), [(None, None, 0)], DAY_US, session=session):
            groups.add(session, row)
        return groups.tallies().total
