"""The ``alerts.*`` operations (docs/cost.md): list the alerts, and raise a test one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from daemon.alerts.service import KIND, SESSION, Alerts, alert_json
from daemon.rpc.registry import Call, Ops
from daemon.rpc.requests import NoArgs, Timestamp
from store.base import EventQuery
from store.errors import UsageError

OPS = Ops(Alerts)
MAX_LIMIT = 5000


@dataclass(frozen=True, slots=True)
class ListAlerts:
    since: Timestamp | None = None
    limit: int = 50


@OPS.op("alerts.list", ListAlerts)
async def alerts_list(alerts: Alerts, request: ListAlerts, call: Call) -> dict[str, Any]:
    """The latest alerts, oldest first."""
    if not 1 <= request.limit <= MAX_LIMIT:
        raise UsageError(f"limit must be from 1 to {MAX_LIMIT}, got {request.limit}")
    query = EventQuery(session=SESSION, kinds=(KIND,), since=request.since, order="desc", limit=request.limit)
    return {"alerts": [alert_json(event) for event in reversed(await alerts.core.store.query(query))]}


@OPS.op("alerts.test", NoArgs)
async def alerts_test(alerts: Alerts, request: NoArgs, call: Call) -> dict[str, Any]:
    """Record a test alert and run the command with it, as a real one would be."""
    payload = {"type": "test", "level": "info", "message": "a test alert from `toka alerts --test`"}
    alert = await alerts.raise_alert("test", None, payload)
    assert alert is not None  # no key: always a new event
    return alert
