"""The cost component: prices the usage the log holds, for reports, blocks and the status line.

It is handed the core (the store, the settings, the clock) and keeps two things of its own: the
price table with the config's prices over it, loaded on first use (a few dozen milliseconds the
daemon does not spend at start-up), and where each session came from (its first
``session.meta``: agent, working directory, repository), read from the log once and kept up to
date from the events committed since.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from daemon.component import Component
from daemon.contract.kinds import Kind
from daemon.core import Core
from daemon.cost.blocks import BLOCK_US, HOUR_US, Block, active_tally, blocks_document, draw_blocks
from daemon.cost.periods import Periods, day_range, offsets, time_zone
from daemon.cost.plan_limits import CODEX, codex_limits
from daemon.cost.prices import PriceTable
from daemon.cost.report import Filter, ReportRequest, SessionSource, document, period_report, session_report
from daemon.cost.settings import ModelSettings
from daemon.cost.tally import Groups, Tally
from store.base import EventQuery
from store.events import Event
from store.usage import BUCKET_US, DAY_US, UsageRow

META = Kind.SESSION_META


@dataclass(frozen=True, slots=True)
class BlockLimits:
    """What a 5-hour block may use before an alert is raised (0: no limit): the ``[alerts]``
    settings, which block figures are measured against unless a request gives its own."""

    tokens: int = 0
    cost: float = 0.0


class Costs(Component):
    def __init__(self, core: Core, limits: BlockLimits | None = None) -> None:
        self.core = core
        self.limits = limits or BlockLimits()
        self._prices: PriceTable | None = None
        self._sources: dict[str, tuple[int, SessionSource]] = {}  # session -> (seq of its first meta, source)
        self._loaded = False

    @property
    def prices(self) -> PriceTable:
        if self._prices is None:
            self._prices = PriceTable(self.core.settings[ModelSettings].prices)
        return self._prices

    def committed(self, events: list[Event], own: bool) -> None:
        """Note where new sessions came from."""
        for event in events:
            if event.kind == META:
                self._note(event)

    def _note(self, event: Event) -> None:
        held = self._sources.get(event.session)
        found = SessionSource.of(event.payload)
        # The first meta says, unless a later one knows the project and it did not (telemetry's
        # meta names the agent only; the transcript's, imported after it, has the working dir).
        earlier = held is None or held[0] > event.seq
        if (
            earlier
            and (held is None or found.project or not held[1].project)
            or (held is not None and not held[1].project and found.project)
        ):
            self._sources[event.session] = (event.seq, found)

    async def sources(self) -> dict[str, SessionSource]:
        """Where each session came from; read from the log the first time."""
        if not self._loaded:
            async for event in self.core.store.scan(EventQuery(kinds=(META,))):
                self._note(event)
            self._loaded = True
        return {session: source for session, (_, source) in self._sources.items()}

    async def report(self, request: ReportRequest) -> dict[str, Any]:
        """A report of ``request.kind`` (daily, weekly, monthly, session, blocks)."""
        request = request.checked()
        zone, zone_name = time_zone(request.timezone)
        days = day_range(request.since, request.until, zone, self.core.clock())
        chosen = Filter(
            await self.sources() if request.source or request.project or request.kind == "session" else {},
            request.source,
            request.project,
        )
        if request.kind == "blocks":
            # Claude's blocks hold Claude's usage; Codex's limits are its own windows.
            chosen = Filter(await self.sources(), request.source, request.project, without=await self.other_plan())
            rows = await self.sums(chosen, [(days.start, days.end, 0)], BUCKET_US)
            groups = Groups(self.prices, breakdown=request.breakdown)
            limits = self.limits  # the limits alerts watch, unless the request gives its own
            tokens = request.token_limit if request.token_limit is not None else limits.tokens or None
            cost = request.cost_limit if request.cost_limit is not None else limits.cost or None
            blocks = blocks_document(draw_blocks(rows), groups, self.now(), tokens, cost)
            blocks |= {"plan": "claude", "codex": await self.codex_limits()}
            return document(request, zone_name, days, self.prices, blocks.pop("rows"), blocks.pop("totals")) | blocks
        if request.kind == "session":
            rows = await self.sums(chosen, [(days.start, days.end, 0)], DAY_US, sessions=True)
            return session_report(request, rows, self.prices, chosen, zone_name, days)
        rows = await self.sums(chosen, offsets(zone, days.start, days.end, self.now()), DAY_US)
        return period_report(request, rows, self.prices, Periods(request.kind, zone), zone_name, days)

    async def sums(
        self,
        chosen: Filter,
        parts: list[tuple[int | None, int | None, int]],
        width: int,
        sessions: bool = False,
        session: str | None = None,
    ) -> list[UsageRow]:
        """The usage of the sessions ``chosen`` takes, summed per ``width`` (a day, or a bucket)
        in each part of the range with its zone offset, UTC day, model and prompt class (per
        session and agent too when ``sessions``, or when the filter needs them). A model priced
        by the hour of the day is summed per bucket instead, so that each hour pays its price."""
        store = self.core.store
        sessions = sessions or chosen.filtering
        rows: list[UsageRow] = []
        for start, end, offset in parts:
            rows += await store.usage_sums(start, end, width=width, offset=offset, sessions=sessions, session=session)
        rows = chosen.rows(rows)
        by_hour = sorted({row.model for row in rows if (found := self.prices.find(row.model)) and found.by_hour})
        if by_hour and width != BUCKET_US:
            rows = [row for row in rows if row.model not in by_hour]
            for start, end, _ in parts:
                hourly = await store.usage_sums(start, end, sessions=sessions, session=session, models=by_hour)
                rows += chosen.rows(hourly)
        return rows

    def now(self) -> int:
        """The clock, in UTC microseconds."""
        return int(self.core.clock() * 1_000_000)

    async def other_plan(self) -> str | None:
        """The source whose usage Claude's blocks leave out, when the log has any of it: Codex."""
        return CODEX if any(found.source == CODEX for found in (await self.sources()).values()) else None

    async def codex_limits(self) -> dict[str, Any] | None:
        """Codex's limit windows, from its latest sessions' readings (daemon/cost/plan_limits.py)."""
        codex = {session for session, found in (await self.sources()).items() if found.source == CODEX}
        return await codex_limits(self.core.store, codex, self.now())

    async def active_block(self, source: str | None = None) -> tuple[Block, Tally] | None:
        """The active block (of the sessions of ``source``, or of all but Codex's, which are
        not Claude's), with its tally.

        A block's start depends on the calls before it back to the last quiet spell of five
        hours, so the rows are read back a day, then a week, then to the start of the log,
        until there is such a spell before them."""
        now = self.now()
        chosen = Filter(
            await self.sources(), source, None, without=None if source == CODEX else await self.other_plan()
        )
        for span in (DAY_US, 7 * DAY_US, None):
            start = None if span is None else now - now % HOUR_US - span
            rows = await self.sums(chosen, [(start, None, 0)], BUCKET_US)
            if start is None or not await self.sums(chosen, [(start - BLOCK_US, start, 0)], BUCKET_US):
                break
        blocks = draw_blocks(rows)
        if not blocks or not blocks[-1].active(now):
            return None
        return blocks[-1], active_tally(blocks[-1], Groups(self.prices))
