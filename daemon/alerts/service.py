"""The alerts component: watches what the daemon commits, records an ``alert`` event when
something needs a person's eye, and runs the user's command with it (daemon/alerts/notify.py).

Two things raise an alert:

- an agent going up to WARNING or CRITICAL: the lifecycle's ``lifecycle`` event, committed by
  this daemon (on a log other daemons share, each alerts for what it evaluated itself), at most
  ``max_age_s`` after the change it records: an import of past sessions raises none;
- the active 5-hour block going over ``[alerts] block_cost_limit`` or ``block_token_limit``,
  checked after each batch of usage this daemon commits (only when a limit is set).

Alerts are events of the session ``toka.alerts``, keyed by what caused them (the lifecycle
event; the block's start and the limit), so each is recorded once, however often the daemon
restarts or re-checks, and the command runs only for an alert newly recorded. The work is done
by :meth:`Alerts.run`, a task of its own: committing never waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from typing import Any

from daemon.alerts.notify import Notifier
from daemon.alerts.settings import AlertSettings
from daemon.component import Component
from daemon.contract.kinds import Kind
from daemon.contract.states import WORST_FIRST, AgentState
from daemon.core import Core
from daemon.cost.service import Costs
from store.events import Event, NewEvent, format_ts

log = logging.getLogger("toka.daemon")

SESSION = "toka.alerts"
KIND = Kind.ALERT
LIFECYCLE = Kind.LIFECYCLE
# The states an agent going up into raises an alert, with the level it has.
LEVELS: dict[str, str] = {AgentState.WARNING: "warning", AgentState.CRITICAL: "critical"}
# States an agent comes from when it goes *up* into one of those: those less bad (in the one order
# of daemon/contract/states.py), but for HANDOFF_PENDING, whose way back to CRITICAL is no news.
BELOW: dict[str, tuple[str, ...]] = {
    state: tuple(s for s in WORST_FIRST[WORST_FIRST.index(state) + 1 :] if s != AgentState.HANDOFF_PENDING)
    for state in LEVELS
}


def alert_json(event: Event) -> dict[str, Any]:
    """An alert as `toka alerts --json` and the command's stdin show it."""
    return {"seq": event.seq, "id": event.id, "ts": format_ts(event.ts), **event.payload}


class Alerts(Component):
    def __init__(self, core: Core, costs: Costs) -> None:
        self.core = core
        self.costs = costs
        self.settings = core.settings[AlertSettings]
        self.notifier = Notifier(self.settings)
        self._queue: deque[Event] = deque()
        self._usage = False
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()  # set while nothing is queued or being raised
        self._task: asyncio.Task[None] | None = None

    def committed(self, events: list[Event], own: bool) -> None:
        """Queue what may raise an alert; ``own``: the events are this daemon's own."""
        if not own:
            return
        oldest = (self.core.clock() - self.settings.max_age_s) * 1_000_000  # older: history, not an alert
        for event in events:
            if event.kind == LIFECYCLE:
                if event.ts < oldest or event.payload.get("from") not in BELOW.get(str(event.payload.get("to")), ()):
                    continue
                self._queue.append(event)
                self._idle.clear()
                self._wake.set()
            elif event.kind == Kind.USAGE and (self.settings.block_cost_limit or self.settings.block_token_limit):
                self._usage = True
                self._idle.clear()
                self._wake.set()

    async def start(self) -> None:
        self._task = asyncio.create_task(self.run(), name="alerts")

    async def stop(self, deadline: float) -> None:
        """Raise what is queued (within ``deadline``), then stop; running commands get the
        deadline too."""
        if self._task is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), deadline)
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.notifier.stop(deadline)

    async def run(self) -> None:
        """Raise the alerts of what was committed, until cancelled."""
        while True:
            if not self._queue and not self._usage:
                self._idle.set()
            await self._wake.wait()
            self._idle.clear()
            self._wake.clear()
            try:
                while self._queue:
                    await self._agent_alert(self._queue.popleft())
                if self._usage:
                    self._usage = False
                    await self._block_alerts()
            except Exception:  # an alert lost must not stop the next ones
                log.exception("alerts: an alert was not raised")

    async def _agent_alert(self, change: Event) -> None:
        state = change.payload["to"]
        agent = change.payload.get("agent") or f"{change.session}/{change.agent}"
        fill = change.payload.get("fill_pct")
        detail = f": context {fill}% of {change.payload.get('context_window'):,} tokens" if fill is not None else ""
        await self.raise_alert(
            f"agent:{agent}:{state}",
            f"alert:{change.id}",
            {
                "type": "agent",
                "level": LEVELS[state],
                "message": f"agent {agent} is {state}{detail}",
                "session": change.session,
                "agent": agent,
                "state": state,
                "fill_pct": fill,
                "context_tokens": change.payload.get("context_tokens"),
                "context_window": change.payload.get("context_window"),
                "cause": change.id,
            },
        )

    async def _block_alerts(self) -> None:
        found = await self.costs.active_block()
        if found is None:
            return
        block, tally = found
        start = format_ts(block.start)
        limits = (("cost", tally.cost_usd, self.settings.block_cost_limit, "$"),
                  ("tokens", tally.total_tokens, self.settings.block_token_limit, ""))  # fmt: skip
        for name, used, limit, unit in limits:
            if not limit or used is None or used < limit:
                continue
            shown = f"{unit}{used:,.2f} of {unit}{limit:,.2f}" if unit else f"{used:,} of {limit:,} tokens"
            await self.raise_alert(
                f"block:{name}",
                f"alert:block:{start}:{name}",
                {
                    "type": "block",
                    "level": "critical",
                    "message": f"the 5-hour block from {start[11:16]} UTC went over its {name} limit: {shown}",
                    "limit": name,
                    "used": used,
                    "limit_value": limit,
                    "block_start": start,
                    "block_end": format_ts(block.end),
                },
            )

    async def raise_alert(self, topic: str, key: str | None, payload: dict[str, Any]) -> dict[str, Any] | None:
        """Record an alert (once per ``key``) and run the command for it; the alert, or None when
        it was recorded before."""
        # Decided before the append, to be recorded with the alert. An alert recorded before (a
        # re-check after a restart) spends its topic's turn for nothing, which only delays a
        # command for the same topic that command_interval_s would hold anyway.
        decision = self.notifier.decide(topic)
        event = NewEvent(SESSION, KIND, {**payload, "command": decision}, key=key)
        [result] = await self.core.append([event])
        if not result.created:
            return None
        alert = alert_json(result.event)
        if decision == "run":
            self.notifier.run(alert)
        return alert
