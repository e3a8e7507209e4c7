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
from typing import Any, TypeVar

from daemon.agents.usage import output_revisions
from daemon.component import Component
from daemon.config import DaemonSettings, Settings, StoreSettings
from daemon.core import Core
from daemon.export.forwarder import Forwarder
from daemon.heads.service import Heads
from daemon.ingest.spool import SpoolDrain
from daemon.ingest.watch import DaemonWatcher
from daemon.lifecycle.service import Lifecycle
from daemon.otel.endpoint import Endpoint
from daemon.paths import Paths
from daemon.rpc.hub import Hub
from daemon.server.commit import GroupCommitter
from daemon.server.components import build_components, handlers
from daemon.server.connection import ACCEPT_BACKLOG, ClientProtocol, Gate
from daemon.server.follow import Follower
from daemon.server.handover import Handover
from daemon.server.ops import Process
from daemon.server.projections import Projections
from daemon.server.serving import Connections
from daemon.states.machines import Machine
from daemon.version import PROTOCOL_VERSION, VERSION
from store.base import EventQuery, EventStore
from store.errors import StoreUnavailable
from store.events import Event

log = logging.getLogger("toka.daemon")

LAST = EventQuery(order="desc", limit=1)
C = TypeVar("C", bound=Component)


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
        self.handover = Handover()  # how far the projections have been handed the log
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
        core = Core(store, self.committer.append, settings, paths, handed_over=self.handover.wait, hub=self.hub)
        self.components: list[Component] = build_components(core, self.committer, machines)
        projections = (component.projection() for component in self.components)
        self.projections = Projections([projection for projection in projections if projection is not None])
        self.handlers = handlers(self.components, {Process: self, Core: core})
        self.spool = self._component(SpoolDrain)
        self.lifecycle = self._component(Lifecycle)
        self.heads, self.export = self._component(Heads), self._component(Forwarder)
        self.otel, self.watcher = self._component(Endpoint), self._component(DaemonWatcher)
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
        self.connections = Connections(self.gate, self.handlers, lambda: self._stopping)
        self._server: asyncio.AbstractServer | None = None

    def _component(self, kind: type[C]) -> C:
        found = self.handlers[kind]
        assert isinstance(found, kind)
        return found

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
        for component in self.components:
            try:
                component.committed(events, own)
            except Exception:  # the events are committed: every other component must have them too
                log.exception(
                    "%s failed to take events seq %d to %d", type(component).__name__, events[0].seq, events[-1].seq
                )

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
            "watch": self.watcher.status(),
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
        # The projections load what the log holds: up to the seq the follower marks on a log
        # other daemons share, which hands over what follows (each event once, whatever other
        # daemons commit meanwhile) once every component has started; else up to its end, and
        # what commits next is handed over as it commits.
        if self.follower is not None:
            await self.follower.mark()
            await self._count()  # for a status asked while the database server is away
            self.handover.advance(self.follower.seen)
            await self.projections.load(self.store, through=self.follower.seen)
        else:
            self.handover.advance(max([event.seq for event in await self.store.query(LAST)], default=0))
            await self.projections.load(self.store)
        for component in self.components:
            await component.start()
        if self.follower is not None:
            self.follower.start()
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
        await self._stop.wait()
        await self._shutdown()

    async def _shutdown(self) -> None:
        """Stop taking requests and give those in flight until the deadline; then stop the
        components in reverse order, each within the deadline: the feeds of the log first, the
        committer commits what they left, the heads sign it last."""
        self._stopping = True
        deadline = self.settings[DaemonSettings].shutdown_deadline
        if self._server is not None:
            self._server.close()
        for closed in self.connections.streams:
            closed.set()
        try:
            await asyncio.wait_for(self.connections.idle.wait(), deadline)
        except TimeoutError:
            log.warning("%d requests did not finish within the deadline", self.connections.in_flight)
        for writer in list(self.connections.writers):
            writer.transport.abort()  # idle clients, and any that would not take their answer
        for component in reversed(self.components):
            began = time.monotonic()
            try:
                await component.stop(deadline)
            except Exception:  # the others must stop too, and the store be closed
                log.exception("stopping %s failed", type(component).__name__)
            if (took := time.monotonic() - began) > 1.0:  # a client waiting for the stop says why
                log.warning("stopping %s took %.1fs", type(component).__name__, took)
        if self.follower is not None:
            await self.follower.stop()
        await self.store.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.paths.socket)
        log.info("stopped")
