"""Every operation the daemon answers, from every component's ops module, in one registry."""

from __future__ import annotations

from daemon.alerts import ops as alerts
from daemon.compress import ops as compress
from daemon.cost import ops as cost
from daemon.deps import ops as deps
from daemon.export import ops as export
from daemon.handoff import ops as handoff
from daemon.heads import ops as heads
from daemon.ingest import ops as ingest
from daemon.inject import ops as inject
from daemon.lifecycle import ops as agents
from daemon.log import ops as log
from daemon.memory import ops as memory
from daemon.memory import pool_ops as pool
from daemon.recall import ops as recall
from daemon.retention import ops as retention
from daemon.rpc.registry import Registry
from daemon.search import ops as search
from daemon.server import doctor_ops as doctor
from daemon.server import ops as process
from daemon.states import ops as states
from daemon.transfer import ops as transfer

REGISTRY = Registry(
    [
        process.OPS,
        doctor.OPS,
        log.OPS,
        agents.OPS,
        handoff.OPS,
        inject.OPS,
        compress.COMPRESS,
        compress.CONTEXT,
        memory.OPS,
        pool.OPS,
        states.OPS,
        deps.OPS,
        search.OPS,
        recall.OPS,
        retention.OPS,
        transfer.OPS,
        cost.OPS,
        cost.STATUSLINE,
        cost.LIVE,
        alerts.OPS,
        heads.OPS,
        ingest.OPS,
        ingest.WATCH,
        export.OPS,
    ]
)
