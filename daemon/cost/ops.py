"""The cost operations (docs/protocol.md, docs/cost.md): reports of what the log's usage cost."""

from __future__ import annotations

from typing import Any

from daemon.cost.report import ReportRequest
from daemon.cost.service import Costs
from daemon.cost.statusline import StatusLine, StatusLineRequest
from daemon.server.registry import Call, Ops

OPS = Ops(Costs)
STATUSLINE = Ops(StatusLine)


@OPS.op("report", ReportRequest)
async def report(costs: Costs, request: ReportRequest, call: Call) -> dict[str, Any]:
    """Usage and its cost per day, week, month or session."""
    return await costs.report(request)


@STATUSLINE.op("statusline", StatusLineRequest)
async def statusline(line: StatusLine, request: StatusLineRequest, call: Call) -> dict[str, Any]:
    """Record Claude Code's status line input; the figures its line shows."""
    return await line.answer(request)
