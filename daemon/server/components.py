"""Every component of the daemon, built from the core and the components below it, in the order
they start (they stop in reverse): the one list the daemon wires, fans commits out to, starts and
stops (daemon/component.py), and answers requests with, one component for each type an op names
(daemon/server/catalog.py)."""

from __future__ import annotations

from collections.abc import Mapping

from daemon.alerts.service import Alerts
from daemon.alerts.settings import AlertSettings
from daemon.component import Component
from daemon.compress.context import ContextAssembler
from daemon.core import Core
from daemon.cost.live import LiveCosts
from daemon.cost.service import BlockLimits, Costs
from daemon.cost.statusline import StatusLine
from daemon.deps.graph import Dependencies
from daemon.export.forwarder import Forwarder
from daemon.export.service import Exporter
from daemon.heads.service import Heads
from daemon.ingest.spool import SpoolDrain
from daemon.ingest.watch import DaemonWatcher
from daemon.inject.service import Injector
from daemon.lifecycle.service import Lifecycle
from daemon.log.service import EventLog
from daemon.memory.pool_service import PoolService
from daemon.memory.service import Memory
from daemon.otel.endpoint import Endpoint
from daemon.recall.service import Embeddings
from daemon.retention.ops import Retention
from daemon.search.ops import LogSearch
from daemon.server.catalog import REGISTRY
from daemon.server.commit import GroupCommitter
from daemon.server.projector import Projector
from daemon.states.machines import Machine
from daemon.states.service import States


def build_components(
    core: Core, committer: GroupCommitter, machines: Mapping[str, Machine] | None = None
) -> list[Component]:
    """The components in start order. What must run before the first commit comes first (the
    signing key is read, and the export cursor, before anything is appended), the projector and
    the committer next, then the services, and last what feeds the log from outside (the hook spool, the
    watched files, the OTLP receiver), so that at shutdown those stop first, the committer
    commits what they left, the projector applies it to the derived tables, and the heads sign it."""
    heads = Heads(core)  # a key that cannot be read stops start-up, before anything is appended
    alerting = core.settings[AlertSettings]
    costs = Costs(core, BlockLimits(alerting.block_token_limit, alerting.block_cost_limit))
    lifecycle = Lifecycle(core)  # the agents, their directory, the handoffs and the compressor
    memory, pool = Memory(core), PoolService(core)
    refs = lifecycle.directory.refs
    embeddings = Embeddings(core)  # embeds after commits, never in them
    components: list[Component] = [
        heads,
        Forwarder(core, costs.prices),  # sends only when export.otlp.endpoint is set
        Projector(core.store),  # stops after the committer: what it committed last is applied
        committer,
        memory,
        pool,
        States(core, machines),
        Dependencies(core),
        costs,
        Alerts(core, costs),
        lifecycle,
        lifecycle.handoffs,
        lifecycle.compressor,
        Injector(core, lifecycle, embeddings),
        EventLog(core, refs, lifecycle.evaluated, heads.sign_or_log, embeddings.rebuild),
        embeddings,
        LogSearch(core, refs, embeddings),
        ContextAssembler(core, refs, memory, pool),
        Retention(core, lifecycle.agents, refs),
        Exporter(core, costs, refs),
        LiveCosts(core, costs),
        StatusLine(core, lifecycle.directory, lifecycle.agents, lifecycle.evaluated, costs),
        SpoolDrain(core),  # drains what hooks spooled before the socket answers
        DaemonWatcher(core),  # only when watch.paths is set
        Endpoint(core),  # serves only when otel.listen is set
    ]
    return components


def handlers(components: list[Component], others: Mapping[type, object]) -> dict[type, object]:
    """Every component by its type, with the ``others`` ops are handed too (the process, the
    core); fails when an op names one that is not built."""
    by_type = {type(component): component for component in components} | dict(others)
    missing = REGISTRY.components() - set(by_type)
    assert not missing, f"ops declared for components the daemon does not build: {missing}"
    return by_type
