"""The daemon process: start-up, serve, shutdown with a deadline.

Start-up takes a lock on the pidfile (one daemon per data dir), opens the store, removes a stale
socket and binds a new one as 0600 inside a 0700 runtime dir. Serving reads JSON lines from
each client with a line-size bound of our own, so an oversize or malformed request costs that
request only. Shutdown, on SIGTERM/SIGINT or a ``shutdown`` request, stops accepting, ends
subscriptions, gives in-flight requests until the deadline, commits what is queued,
checkpoints the WAL and unlinks the socket. A second signal exits at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from daemon.agents.usage import output_revisions
from daemon.alerts.service import Alerts
from daemon.config import DaemonSettings, Settings, StoreSettings
from daemon.core import Core
from daemon.cost.service import Costs
from daemon.deps import graph
from daemon.deps.graph import Dependencies
from daemon.export.forwarder import Forwarder
from daemon.heads.service import Heads
from daemon.ingest.settings import WatchSettings
from daemon.ingest.spool import SpoolDrain
from daemon.lifecycle.service import PROJECTED, Lifecycle
from daemon.memory import service as memory
from daemon.memory.pool import MemoryPool
from daemon.memory.pool_service import PoolService
from daemon.memory.service import Memory
from daemon.memory.settings import PoolSettings
from daemon.otel.endpoint import Endpoint
from daemon.paths import Paths
from daemon.rpc.hub import Hub
from daemon.server.commit import GroupCommitter
from daemon.server.components import build_components
from daemon.server.connection import ACCEPT_BACKLOG, ClientProtocol, Gate
from daemon.server.follow import Follower
from daemon.server.handover import Handover
from daemon.server.projections import Projection, Projections
from daemon.server.serving import Connections
from daemon.states import table
from daemon.states.machines import Machine
from daemon.states.service import States
from daemon.version import PROTOCOL_VERSION, VERSION
from store.base import EventQuery, EventStore
from store.errors import StoreUnavailable
from store.events import Event

if TYPE_CHECKING:
    from daemon.ingest.watch import DaemonWatcher

log = logging.getLogger("toka.daemon")

LAST = EventQuery(order="desc", limit=1)


class Daemon:
    """Builds the components around one :class:`~daemon.core.Core`, routes each committed event
    to those that project the log, and answers each request with its op's component."""

    def __init__(
        self, paths: Paths, settings: Settings, store: EventStore, machines: Mapping[str, Machine] | None = None
    ) -> None:
        self.paths = paths
        self.settings = settings
        self.store = store
        self.hub = Hub()
        self.handover = Handover()  # how far the projections below have been handed the log
        # A log other daemons append to is followed, so that their events reach this one's too.
        self.follower = (
            Follower(store, self._committed, lambda: self.spool.drain(), lambda: self.spool.waiting())
            if store.shared
            else None
        )
        self.committer = GroupCommitter(
            store,
            self.follower.own if self.follower else partial(self._committed, own=True),
            partial(output_revisions, store),
            turn=self.follower.turn if self.follower else None,
        )
        self.spool = SpoolDrain(paths, self.committer, durable=settings[StoreSettings].backend != "memory")
        core = Core(store, self.committer.append, settings, paths, handed_over=self.handover.wait)
        self.states = States(store, core.append, machines, core.handed_over)
        self.deps = Dependencies(store, core.append, core.handed_over)
        self.lifecycle = Lifecycle(core)
        self._lifecycle_task: asyncio.Task[None] | None = None
        self.memory = Memory(store, core.append, core.handed_over)
        pool = settings[PoolSettings]
        self.pool = PoolService(MemoryPool(pool.capacity_bytes), core.append, pool.sweep_s)
        self.projections = Projections(
            (
                Projection("agents", PROJECTED, self.lifecycle.agents.apply),
                Projection("states", table.KINDS, self.states.table.apply, table.SESSION),
                Projection("dependencies", graph.KINDS, self.deps.graph.apply, graph.SESSION),
                Projection("memory", (memory.SET, memory.DELETE), self.memory.apply, memory.SESSION),
            )
        )
        self.costs = Costs(core)
        self.alerts, self.heads = Alerts(core, self.costs), Heads(core)
        self.otel = Endpoint(core)  # serves only when otel.listen is set
        self.export = Forwarder(core, self.costs.prices)  # sends only when export.otlp.endpoint is set
        services = (self.memory, self.pool, self.states, self.deps, self.costs, self.alerts, self.heads, self.spool)
        self.components = build_components(self, core, self.hub, self.lifecycle, services)
        self.started = time.monotonic()
        self._socket_text = str(paths.socket)  # status shows it on every call
        # The log's events and sessions as status last read them, with those committed since: what
        # status reports while the database server cannot be read (PostgreSQL).
        self._events = 0
        self._sessions: set[str] = set()  # their names: counted so only on a log other daemons share
        self._session_count = 0
        self.gate = Gate(settings[DaemonSettings])
        self._stop = asyncio.Event()
        self._stopping = False
        self.connections = Connections(self.gate, self.components, lambda: self._stopping)
        self._server: asyncio.AbstractServer | None = None
        self.watcher: DaemonWatcher | None = None
        self._watching: asyncio.Task[None] | None = None
        self._watch_stop = asyncio.Event()

    def _committed(self, events: list[Event], own: bool) -> None:
        """Hand committed events to the hub and the components that project the log; usage is
        evaluated only by the daemon that committed it (``own``)."""
        # Writers waiting for these resume once this returns, when every projection has them.
        self.handover.advance(events[-1].seq)
        self.hub.publish(events)
        self._events += len(events)
        if self.store.shared:
            self._sessions.update(event.session for event in events)
            self._session_count = len(self._sessions)
        self.projections.committed(events)
        self.lifecycle.committed(events, evaluate=own)
        self.costs.committed(events)
        self.alerts.committed(events, evaluate=own)
        self.heads.committed()
        self.export.committed(events)

    async def _count(self) -> None:
        if not self.store.shared:  # nothing appends to it but this daemon: the store's totals will do
            self._events, self._session_count = await self.store.totals()
            return
        sessions = await self.store.sessions()
        self._events, self._sessions = sum(s.events for s in sessions), {s.session for s in sessions}
        self._session_count = len(self._sessions)

    async def status(self) -> dict[str, Any]:
        """The ``status`` document (docs/json.md). While the database server cannot be reached
        (PostgreSQL) it still answers, with ``connection`` saying so and the counts it keeps:
        the daemon is up, and status is where one looks to see why appends fail."""
        with contextlib.suppress(StoreUnavailable):
            await self._count()
        return {
            "version": VERSION,
            "protocol": PROTOCOL_VERSION,
            "pid": os.getpid(),
            "uptime_s": round(time.monotonic() - self.started, 3),
            "database": self.store.location,
            "durability": self.settings[StoreSettings].durability,
            "socket": self._socket_text,
            "events": self._events,
            "sessions": self._session_count,
            "clients": self.connections.clients,
            "buffered_bytes": self.gate.budget.held,
            "subscribers": len(self.hub),
            "commits": self.committer.groups,
            "watch": None if self.watcher is None else self.watcher.status(),
            "connection": self.store.connection_state(),
            "damaged": None if (damage := self.store.damage()) is None else damage.to_json(),
            "projections": self.projections.status(),
            "agents_at_risk": self.lifecycle.at_risk(),
            "otel": self.otel.status(),
            "heads": self.heads.status(),
            "export": self.export.status(),
        }

    @property
    def stop_requested(self) -> bool:
        return self._stop.is_set()

    def request_stop(self, reason: str) -> None:
        if not self._stop.is_set():
            log.info("stopping: %s", reason)
            self._stop.set()

    async def serve(self) -> None:
        """Bind the socket, answer clients until asked to stop, then shut down."""
        sock_path = str(self.paths.socket)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(sock_path)  # we hold the pidfile lock, so any socket here is stale
        await self.heads.start()  # a key that cannot be read stops start-up, before anything is appended
        await self.export.start()  # its cursor read before anything is committed
        self.committer.start()
        self.pool.start()
        if self.follower is not None:
            # The projections load up to the seq the follower marks, and it hands over what
            # follows: each event once, whatever other daemons commit meanwhile.
            await self.follower.mark()
            await self._count()  # for a status asked while the database server is away
            self.handover.advance(self.follower.seen)
            await self.projections.load(self.store, through=self.follower.seen)
        else:  # what the projections load covers; what commits next is handed over as it commits
            self.handover.advance(max([event.seq for event in await self.store.query(LAST)], default=0))
            await self.projections.load(self.store)
        if self.follower is not None:
            self.follower.start()
        self._lifecycle_task = asyncio.create_task(self.lifecycle.run(), name="lifecycle")
        self.alerts.start()
        await self.spool.drain()  # before the socket answers: a client that sees the daemon up sees it
        self.spool.start()
        old_umask = os.umask(0o177)
        try:
            loop = asyncio.get_running_loop()
            self._server = await loop.create_unix_server(
                lambda: ClientProtocol(asyncio.StreamReader(), self.connections.serve),
                path=sock_path,
                backlog=ACCEPT_BACKLOG,
            )
        finally:
            os.umask(old_umask)
        os.chmod(sock_path, 0o600)
        log.info("listening on %s (pid %d, store %s)", sock_path, os.getpid(), self.store.location)
        if self.settings[WatchSettings].paths:
            self._start_watching()
        await self.otel.start()
        await self._stop.wait()
        await self._shutdown()

    def _start_watching(self) -> None:
        from daemon.ingest.tail import Cursors
        from daemon.ingest.watch import DaemonWatcher, resolve_roots

        # A memory store forgets its events at exit, so its watcher must forget how far it read.
        cursors = Cursors(self.paths.cursors("daemon") if self.settings[StoreSettings].backend != "memory" else None)
        roots = resolve_roots(self.settings[WatchSettings].paths)
        self.watcher = DaemonWatcher(roots, cursors, self.committer.append, exclude=self.paths.data_dir)
        self._watching = asyncio.create_task(self.watcher.run(self._watch_stop), name="watch")

    async def _stop_watching(self) -> None:
        if self._watching is None or self.watcher is None:
            return
        self._watch_stop.set()
        self.watcher.stopping.set()  # the file being read stops after its current batch
        try:
            await asyncio.wait_for(self._watching, self.settings[DaemonSettings].shutdown_deadline)
        except TimeoutError:
            log.warning("the watcher did not stop within the deadline")

    async def _stop_lifecycle(self) -> None:
        """Let the usage already committed move its agents (within the deadline), then stop."""
        if self._lifecycle_task is None:
            return
        try:
            await asyncio.wait_for(self.lifecycle.drained(), self.settings[DaemonSettings].shutdown_deadline)
        except TimeoutError:
            log.warning("lifecycle: usage left unevaluated at shutdown")
        self._lifecycle_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._lifecycle_task

    async def _shutdown(self) -> None:
        deadline = self.settings[DaemonSettings].shutdown_deadline
        self._stopping = True
        if self._server is not None:
            self._server.close()
        await self._stop_watching()
        await self.spool.stop()
        await self.otel.stop(deadline)  # answers what is in flight
        for closed in self.connections.streams:
            closed.set()
        try:
            await asyncio.wait_for(self.connections.idle.wait(), deadline)
        except TimeoutError:
            log.warning("%d requests did not finish within the deadline", self.connections.in_flight)
        for writer in list(self.connections.writers):
            writer.transport.abort()  # idle clients, and any that would not take their answer
        await self._stop_lifecycle()
        await self.alerts.stop(deadline)
        await self.pool.stop()
        await self.committer.close()
        await self.export.stop(deadline)  # after the last commit: its spans go too
        await self.heads.stop(deadline)
        if self.follower is not None:
            await self.follower.stop()
        await self.store.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.paths.socket)
        log.info("stopped")
