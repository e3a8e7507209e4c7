"""The cost operations (docs/protocol.md, docs/cost.md): reports of what the log's usage cost."""

from __future__ import annotations

from typing import Any

from daemon.cost.report import ReportRequest
from daemon.cost.service import Costs
from daemon.server.registry import Call, Ops

OPS = Ops(Costs)


@OPS.op("report", ReportRequest)
async def report(costs: Costs, request: ReportRequest, call: Call) -> dict[str, Any]:
    """Usage and its cost per day, week, month or session."""
    return await costs.report(request)
