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
import errno
import fcntl
import json
import logging
import os
import signal
import socket
import struct
import sys
import time
from collections.abc import Mapping
from functools import partial
from typing import IO, TYPE_CHECKING, Any

from daemon.agents import ops as agent_ops  # noqa: F401 - the ops modules register their operations
from daemon.agents.lifecycle import Lifecycle
from daemon.agents.usage import output_revisions
from daemon.compress import ops as context_ops  # noqa: F401
from daemon.config import Settings, load_settings
from daemon.deps import ops as deps_ops  # noqa: F401
from daemon.deps.graph import Dependencies
from daemon.handoff import ops as handoff_ops  # noqa: F401
from daemon.ingest.spool import ingest_spool
from daemon.memory import ops as memory_ops  # noqa: F401
from daemon.memory import pool_ops  # noqa: F401
from daemon.memory.context_store import ContextStore
from daemon.memory.pool import MemoryPool
from daemon.memory.pool_service import PoolService
from daemon.paths import Paths, resolve_paths
from daemon.protocol import encode, error_message
from daemon.retention import ops as retention_ops  # noqa: F401
from daemon.search import ops as search_ops  # noqa: F401
from daemon.server import doctor_ops, ops  # noqa: F401
from daemon.server.commit import GroupCommitter
from daemon.server.hub import Hub
from daemon.server.wire import RawJson
from daemon.states import ops as state_ops  # noqa: F401
from daemon.states.machines import Machine, read_machines
from daemon.states.service import StateStore
from store.base import EventStore
from store.errors import Busy, StoreError, TokaError, UsageError
from store.events import Event

if TYPE_CHECKING:
    from daemon.ingest.watch import DaemonWatcher

log = logging.getLogger("toka.daemon")

READ_CHUNK = 256 * 1024
# What asyncio's socket transports ask recv() for at a time (256 KiB by default). A buffer that
# large is past glibc's mmap threshold (128 KiB), so every read maps and unmaps memory: about
# 12 µs of a request that otherwise costs a few tens. Below the threshold the buffer comes from
# the heap; a 4 MiB request line then takes 64 reads instead of 16, which costs nothing to see.
RECV_SIZE = 64 * 1024
# Connections the kernel queues before accept() (asyncio's default is 100). Every hook of every
# agent connects once per tool call; a burst past the queue would meet EAGAIN. The kernel caps
# it at net.core.somaxconn.
ACCEPT_BACKLOG = 1024


class LineTooLong(Exception):
    pass


class LineReader:
    """Reads newline-terminated lines with a size bound, discarding (not buffering) the excess."""

    def __init__(self, reader: asyncio.StreamReader, limit: int) -> None:
        self._reader = reader
        self._limit = limit
        self._buffer = bytearray()

    async def next(self) -> bytes | None:
        """The next line, None at end of input; raises LineTooLong after skipping past one."""
        discarding = False
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                if discarding or end > self._limit:
                    raise LineTooLong
                return line
            if len(self._buffer) > self._limit:
                discarding = True
                self._buffer.clear()
            chunk = await self._reader.read(READ_CHUNK)
            if not chunk:
                return None  # a half line at hang-up is dropped: it was never a request
            self._buffer += chunk


def _read_size(transport: asyncio.BaseTransport) -> None:
    """Make the transport read RECV_SIZE bytes at a time. ``max_size`` is an attribute of
    CPython's selector transports, not a documented setting: where it is missing, reads stay
    as they were."""
    if isinstance(getattr(transport, "max_size", None), int):
        transport.max_size = RECV_SIZE  # type: ignore[attr-defined]


async def open_store(paths: Paths, settings: Settings) -> EventStore:
    if settings.backend == "memory":
        from store.ephemeral import EphemeralStore

        return EphemeralStore()
    from store.sqlite import SqliteStore

    paths.data_dir.mkdir(parents=True, exist_ok=True)
    return await SqliteStore.open(paths.database, durability=settings.durability)  # type: ignore[arg-type]


class PidLock:
    """An exclusive lock on the pidfile, held for the daemon's lifetime."""

    def __init__(self, paths: Paths) -> None:
        self._path = paths.pidfile
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        handle = open(self._path, "a+")  # noqa: SIM115 - held open: the lock lives as long as it
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            pid = handle.read().strip() or "?"
            handle.close()
            raise TokaError(
                f"a toka daemon is already running for this data dir (pid {pid})",
                "stop it with `toka daemon stop`, or set TOKA_HOME to use another data dir",
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._file = handle

    def release(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._path.unlink()
            self._file.close()
            self._file = None


def peer_uid(writer: asyncio.StreamWriter) -> int | None:
    """The uid of the connected process, where the OS tells it (SO_PEERCRED on Linux)."""
    sock = writer.get_extra_info("socket")
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


class Daemon:
    def __init__(
        self, paths: Paths, settings: Settings, store: EventStore, machines: Mapping[str, Machine] | None = None
    ) -> None:
        self.paths = paths
        self.settings = settings
        self.store = store
        self.hub = Hub()
        self.committer = GroupCommitter(store, self._committed, partial(output_revisions, store))
        self.states = StateStore(store, self.committer.append, machines)
        self.deps = Dependencies(store, self.committer.append)
        markdown_dir = paths.handoffs if settings.save_markdown else None
        self.lifecycle = Lifecycle(store, self.committer.append, settings, markdown_dir)
        self._lifecycle_task: asyncio.Task[None] | None = None
        self.memory = ContextStore(store, self.committer.append)
        self.pool = PoolService(MemoryPool(settings.capacity_bytes), self.committer.append, settings.sweep_s)
        self.started = time.monotonic()
        self.clients = 0
        self._stop = asyncio.Event()
        self._stopping = False
        self._connections: set[asyncio.StreamWriter] = set()
        self._in_flight = 0
        self._idle = asyncio.Event()  # set while no request is being answered
        self._idle.set()
        self._streams: set[asyncio.Event] = set()
        self._server: asyncio.AbstractServer | None = None
        self.watcher: DaemonWatcher | None = None
        self._watching: asyncio.Task[None] | None = None
        self._watch_stop = asyncio.Event()

    def _committed(self, events: list[Event]) -> None:
        self.hub.publish(events)
        self.lifecycle.committed(events)
        self.states.committed(events)
        self.deps.committed(events)
        self.memory.committed(events)

    def request_stop(self, reason: str) -> None:
        if not self._stop.is_set():
            log.info("stopping: %s", reason)
            self._stop.set()

    async def serve(self) -> None:
        """Bind the socket, answer clients until asked to stop, then shut down."""
        sock_path = str(self.paths.socket)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(sock_path)  # we hold the pidfile lock, so any socket here is stale
        self.committer.start()
        self.pool.start()
        await self.lifecycle.load()
        await self.states.load()
        await self.deps.load()
        await self.memory.load()
        self._lifecycle_task = asyncio.create_task(self.lifecycle.run(), name="lifecycle")
        if self.settings.backend != "memory":  # a throw-away store would lose the spooled hooks
            # Before the socket answers: a client that sees the daemon up sees what hooks spooled.
            await ingest_spool(self.paths, self.committer)
        old_umask = os.umask(0o177)
        try:
            self._server = await asyncio.start_unix_server(self._client, path=sock_path, backlog=ACCEPT_BACKLOG)
        finally:
            os.umask(old_umask)
        os.chmod(sock_path, 0o600)
        log.info("listening on %s (pid %d, store %s)", sock_path, os.getpid(), self.store.location)
        if self.settings.paths:
            self._start_watching()
        await self._stop.wait()
        await self._shutdown()

    def _start_watching(self) -> None:
        from daemon.ingest.tail import CursorStore
        from daemon.ingest.watch import DaemonWatcher, resolve_roots

        # A memory store forgets its events at exit, so its watcher must forget how far it read.
        cursors = CursorStore(self.paths.cursors("daemon") if self.settings.backend != "memory" else None)
        self.watcher = DaemonWatcher(
            resolve_roots(self.settings.paths), cursors, self.committer.append, exclude=self.paths.data_dir
        )
        self._watching = asyncio.create_task(self.watcher.run(self._watch_stop), name="watch")

    async def _stop_watching(self) -> None:
        if self._watching is None or self.watcher is None:
            return
        self._watch_stop.set()
        self.watcher.stopping.set()  # the file being read stops after its current batch
        try:
            await asyncio.wait_for(self._watching, self.settings.shutdown_deadline)
        except TimeoutError:
            log.warning("the watcher did not stop within the deadline")

    async def _stop_lifecycle(self) -> None:
        """Let the usage already committed move its agents (within the deadline), then stop."""
        if self._lifecycle_task is None:
            return
        try:
            await asyncio.wait_for(self.lifecycle.drained(), self.settings.shutdown_deadline)
        except TimeoutError:
            log.warning("lifecycle: usage left unevaluated at shutdown")
        self._lifecycle_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._lifecycle_task

    async def _shutdown(self) -> None:
        self._stopping = True
        if self._server is not None:
            self._server.close()
        await self._stop_watching()
        for closed in self._streams:
            closed.set()
        try:
            await asyncio.wait_for(self._idle.wait(), self.settings.shutdown_deadline)
        except TimeoutError:
            log.warning("%d requests did not finish within the deadline", self._in_flight)
        for writer in list(self._connections):
            writer.transport.abort()  # idle clients, and any that would not take their answer
        await self._stop_lifecycle()
        await self.pool.stop()
        await self.committer.close()
        await self.store.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.paths.socket)
        log.info("stopped")

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        uid = peer_uid(writer)
        if uid is not None and uid != os.getuid():
            log.warning("refused a client of uid %d", uid)
            writer.write(encode(error_message(None, TokaError("this daemon answers its own user only"))))
            writer.close()
            return
        self.clients += 1
        self._connections.add(writer)
        _read_size(writer.transport)
        lines = LineReader(reader, self.settings.max_line_bytes)
        closed = asyncio.Event()

        async def send(message: dict[str, Any] | bytes) -> None:
            writer.write(message if isinstance(message, bytes) else encode(message))
            await writer.drain()

        try:
            while not self._stopping:
                try:
                    line = await lines.next()
                except LineTooLong:
                    await send(
                        error_message(
                            None,
                            UsageError(
                                f"request line exceeds {self.settings.max_line_bytes} bytes",
                                "split the batch, or raise daemon.max_line_bytes",
                            ),
                        )
                    )
                    continue
                if line is None:
                    break
                if not line.strip():
                    continue
                # Answered inline, not in a task of its own: one event-loop turn less per request.
                self._in_flight += 1
                self._idle.clear()
                try:
                    await self._answer(line, writer, send, closed, lines)
                finally:
                    self._in_flight -= 1
                    if not self._in_flight:
                        self._idle.set()
        except ConnectionError:
            pass
        finally:
            self.clients -= 1
            self._connections.discard(writer)
            closed.set()
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _answer(
        self, line: bytes, writer: asyncio.StreamWriter, send: Any, closed: asyncio.Event, lines: LineReader
    ) -> None:
        request_id = None
        try:
            try:
                request = json.loads(line)
            except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
                raise UsageError(f"request is not valid JSON ({exc})", "send one JSON object per line") from None
            if not isinstance(request, dict):
                raise UsageError("a request must be a JSON object with 'op'")
            request_id = request.get("id")
            name = request.get("op")
            args = request.get("args", {})
            if not isinstance(name, str):
                raise UsageError("a request needs 'op', a string", 'e.g. {"id": 1, "op": "status"}')
            if not isinstance(args, dict):
                raise UsageError("'args' must be a JSON object")
            handler = ops.OPS.get(name)
            if handler is None:
                raise ops.unknown(name)
            if self._stopping:
                raise Busy("the daemon is shutting down", "retry once it has restarted")
            ctx = ops.Context(self, request_id, send, closed)
            if name == "events.subscribe":
                await self._stream(handler, ctx, args, lines)
                return
            result = await handler(ctx, args)
        except TokaError as exc:
            await send(error_message(request_id, exc))
            return
        except (ConnectionError, asyncio.CancelledError):
            raise
        except Exception as exc:  # a bug must cost one request, never the daemon
            log.exception("request %r failed", request_id)
            await send(error_message(request_id, TokaError(f"internal error: {exc}", "see `toka daemon logs`")))
            return
        if isinstance(result, RawJson):
            head = json.dumps({"id": request_id, "ok": True}, ensure_ascii=False)[:-1]
            writer.write(f'{head},"result":{result.text}}}\n'.encode())
            await writer.drain()
        else:
            await send({"id": request_id, "ok": True, "result": result})

    async def _stream(self, handler: ops.Handler, ctx: ops.Context, args: dict[str, Any], lines: LineReader) -> None:
        """Run a streaming op until it ends or the client hangs up or sends anything."""
        ctx.closed = asyncio.Event()  # this stream's own: the connection may stream again after it
        self._streams.add(ctx.closed)

        async def watch_client() -> None:
            with contextlib.suppress(LineTooLong, ConnectionError):
                await lines.next()
            ctx.closed.set()

        watcher = asyncio.create_task(watch_client())
        try:
            await handler(ctx, args)
        finally:
            watcher.cancel()
            self._streams.discard(ctx.closed)
        ctx.closed.set()


async def run(paths: Paths, settings: Settings) -> None:
    os.umask(0o077)  # the database, logs and pidfile are for their owner only
    paths.check_socket_length()
    paths.ensure_runtime_dir()
    lock = PidLock(paths)
    lock.acquire()
    try:
        machines = read_machines(paths.config_file)  # a malformed machine stops start-up before the store opens
        store = await open_store(paths, settings)
        try:
            daemon = Daemon(paths, settings, store, machines)
        except BaseException:
            await store.close()  # else its connection threads keep the process from exiting
            raise
        loop = asyncio.get_running_loop()
        signals = (signal.SIGTERM, signal.SIGINT)

        def on_signal(signum: int) -> None:
            if daemon._stop.is_set():
                log.warning("second signal: exiting at once")
                os._exit(128 + signum)
            daemon.request_stop(signal.Signals(signum).name)

        for signum in signals:
            loop.add_signal_handler(signum, on_signal, signum)
        try:
            await daemon.serve()
        finally:
            for signum in signals:
                loop.remove_signal_handler(signum)
    finally:
        lock.release()


def run_foreground(flags: dict[str, Any] | None = None) -> None:
    """Log to stderr, resolve the settings (flags over env over file) and serve until stopped."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s")
    logging.getLogger("watchfiles").setLevel(logging.WARNING)  # it logs every change at INFO
    paths = resolve_paths()
    settings = load_settings(paths.config_file, flags).settings
    try:
        asyncio.run(run(paths, settings))
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EROFS, errno.EPERM, errno.ENOTDIR):
            raise StoreError(
                f"{exc.strerror}: {exc.filename}", "check the permissions of the data dir, or set TOKA_HOME"
            ) from None
        raise


def main(argv: list[str] | None = None) -> None:
    """``python -m daemon [--memory]``: errors are one line on stderr and an exit code."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        run_foreground({"backend": "memory"} if "--memory" in argv else {})
    except TokaError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        sys.exit(exc.exit_code)
