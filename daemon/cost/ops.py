"""The cost operations (docs/protocol.md, docs/cost.md): reports of what the log's usage cost."""

from __future__ import annotations

from typing import Any

from daemon.cost.compare import CompareRequest, compare
from daemon.cost.live import LiveCosts, SummaryRequest
from daemon.cost.report import ReportRequest
from daemon.cost.service import Costs
from daemon.cost.statusline import StatusLine, StatusLineRequest
from daemon.rpc.registry import Call, Ops

OPS = Ops(Costs)
STATUSLINE = Ops(StatusLine)
LIVE = Ops(LiveCosts)


@OPS.op("report", ReportRequest)
async def report(costs: Costs, request: ReportRequest, call: Call) -> dict[str, Any]:
    """Usage and its cost per day, week, month or session."""
    return await costs.report(request)


@STATUSLINE.op("statusline", StatusLineRequest)
async def statusline(line: StatusLine, request: StatusLineRequest, call: Call) -> dict[str, Any]:
    """Record Claude Code's status line input; the figures its line shows."""
    return await line.answer(request)


@LIVE.op("cost.summary", SummaryRequest)
async def cost_summary(live: LiveCosts, request: SummaryRequest, call: Call) -> dict[str, Any]:
    """Today's cost, the active block with its burn rate, and each agent's share of today."""
    return await live.summary(request)


@LIVE.op("cost.live", SummaryRequest, streaming=True)
async def cost_live(live: LiveCosts, request: SummaryRequest, call: Call) -> None:
    """The summary, sent again as usage commits and every ``refresh_s``."""
    await live.stream(request, call)


@OPS.op("report.compare", CompareRequest)
async def report_compare(costs: Costs, request: CompareRequest, call: Call) -> dict[str, Any]:
    """Per session and model, toka's price of the requests the agent's telemetry reported beside
    the agent's own cost of them."""
    return await compare(costs, request)
