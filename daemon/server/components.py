"""The components the daemon answers requests with, one for each type an op names
(daemon/server/catalog.py): the daemon's own long-lived services and those built on them here."""

from __future__ import annotations

from typing import Any

from daemon.alerts.service import Alerts
from daemon.compress.context import ContextAssembler
from daemon.compress.service import Compressor
from daemon.core import Core
from daemon.cost.live import LiveCosts
from daemon.cost.service import Costs
from daemon.cost.statusline import StatusLine
from daemon.deps.graph import Dependencies
from daemon.export.service import Exporter
from daemon.handoff.service import Handoffs
from daemon.heads.service import Heads
from daemon.ingest.spool import SpoolDrain
from daemon.lifecycle.service import Lifecycle
from daemon.log.service import EventLog
from daemon.memory.pool_service import PoolService
from daemon.memory.service import Memory
from daemon.retention.ops import Retention
from daemon.rpc.hub import Hub
from daemon.search.ops import LogSearch
from daemon.server.catalog import REGISTRY
from daemon.server.ops import Process
from daemon.states.service import States


def build_components(
    process: Process,
    core: Core,
    hub: Hub,
    lifecycle: Lifecycle,
    services: tuple[Memory, PoolService, States, Dependencies, Costs, Alerts, Heads, SpoolDrain],
) -> dict[type, Any]:
    """Every component by its type; fails when an op names one that is not built."""
    memory, pool, states, deps, costs, alerts, heads, spool = services
    refs = lifecycle.directory.refs
    components: dict[type, Any] = {
        Process: process,
        Core: core,
        EventLog: EventLog(core, hub, refs, lifecycle.evaluated, heads.sign_or_log),
        LogSearch: LogSearch(core.store, refs),
        Lifecycle: lifecycle,
        Handoffs: lifecycle.handoffs,
        Compressor: lifecycle.compressor,
        ContextAssembler: ContextAssembler(core, refs, memory, pool),
        Memory: memory,
        PoolService: pool,
        States: states,
        Dependencies: deps,
        Retention: Retention(core.store, lifecycle.agents, refs),
        Costs: costs,
        Exporter: Exporter(core, costs, refs),
        Alerts: alerts,
        Heads: heads,
        SpoolDrain: spool,
        LiveCosts: LiveCosts(costs, hub),
        StatusLine: StatusLine(core, lifecycle.directory, lifecycle.agents, lifecycle.evaluated, costs),
    }
    missing = REGISTRY.components() - set(components)
    assert not missing, f"ops declared for components the daemon does not build: {missing}"
    return components
