"""What the daemon holds for its clients, and holds within bounds: the connections it admits
(its own user's, at most ``daemon.max_connections``), and the lines they send, each read with a
size bound, in reads sized for the allocator.

Memory stays bounded whatever clients do. A line longer than ``daemon.max_line_bytes`` is
skipped, not buffered. Unfinished lines share ``daemon.max_buffered_bytes`` over all connections
past a small allowance each (``FREE_LINE_BYTES``, so that the short requests of hooks and the CLI
are read whatever large ones hold); a line that would go past it is skipped too and answered
``busy`` (one that arrives whole in a single read is in memory already, and is read). A line
left unfinished for ``daemon.line_timeout`` seconds closes its connection. A connection past the
cap is answered ``busy`` and closed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
from collections.abc import Callable

from daemon.config import DaemonSettings
from daemon.ownership import peer_uid
from store.errors import Busy, TokaError, UsageError

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
# What each connection's unfinished line may hold before it draws on daemon.max_buffered_bytes:
# every request of a hook, the CLI or the TUI fits (a hook payload is a few KiB), so those are
# served while large lines hold the shared budget.
FREE_LINE_BYTES = 64 * 1024
# File descriptors the daemon needs besides its connections: the database and its WAL, logs,
# watched files, the alert command's pipes.
OWN_FILES = 256


class RefusedLine(Exception):
    """A line skipped, or a connection to close, and the error that says why."""

    def __init__(self, error: TokaError, close: bool = False) -> None:
        super().__init__(error.message)
        self.error = error
        self.close = close


class Budget:
    """Bytes of unfinished request lines held over all connections, against a limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0

    def move(self, before: int, after: int) -> bool:
        """Hold ``after`` bytes instead of ``before``; False, holding ``before`` still, when more
        than before would pass the limit."""
        if after > before and self.held - before + after > self.limit:
            return False
        self.held += after - before
        return True


class Gate:
    """Admits connections and reads their lines within the daemon's bounds (the module's docstring)."""

    def __init__(self, settings: DaemonSettings) -> None:
        self.settings = settings
        self.budget = Budget(settings.max_buffered_bytes)
        _room_for(settings.max_connections + OWN_FILES)

    def refusal(self, writer: asyncio.StreamWriter, clients: int) -> TokaError | None:
        """Why a new connection is not served (another user's, or one too many), or None."""
        uid = peer_uid(writer.get_extra_info("socket"))
        if uid is not None and uid != os.getuid():
            log.warning("refused a client of uid %d", uid)
            return TokaError("this daemon answers its own user only")
        if clients >= self.settings.max_connections:
            log.warning("refused a client: %d connections open (daemon.max_connections)", clients)
            return Busy(
                f"the daemon has {clients} connections open, its most (daemon.max_connections)",
                "retry in a moment, or raise daemon.max_connections",
            )
        return None

    def lines(self, reader: asyncio.StreamReader) -> LineReader:
        return LineReader(reader, self.settings, self.budget)


class LineReader:
    """Reads newline-terminated lines with a size bound, discarding (not buffering) the excess."""

    def __init__(self, reader: asyncio.StreamReader, settings: DaemonSettings, budget: Budget) -> None:
        self._reader = reader
        self._limit = settings.max_line_bytes
        self._timeout = settings.line_timeout
        self._budget = budget
        self._buffer = bytearray()
        self._held = 0  # of the budget, for the buffer's bytes past FREE_LINE_BYTES
        self._scanned = 0  # bytes of the buffer known to hold no newline

    async def next(self) -> bytes | None:
        """The next line, None at end of input; RefusedLine after skipping past one, or when
        the connection is to close."""
        refused: TokaError | None = None
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                self._scanned = 0
                self._hold(force=True)  # what follows the line: at most one read
                if refused is None and end > self._limit:
                    refused = self._too_long()
                if refused is not None:
                    raise RefusedLine(refused)
                return line
            self._scanned = len(self._buffer)
            if refused is None and len(self._buffer) > self._limit:
                refused = self._too_long()
            if refused is None and not self._hold():
                refused = Busy(
                    f"the daemon holds {self._budget.held} bytes of unfinished requests, its most"
                    " (daemon.max_buffered_bytes): this request was skipped",
                    "retry in a moment, or raise daemon.max_buffered_bytes",
                )
            if refused is not None:
                self._buffer.clear()  # skipped to the end of the line, which need not be kept
                self._scanned = 0
                self._hold(force=True)
            chunk = await self._read(waiting=bool(self._buffer) or refused is not None)
            if not chunk:
                self.close()
                return None  # a half line at hang-up is dropped: it was never a request
            self._buffer += chunk

    def more_sent(self) -> bool:
        """Whether the client has sent more than the lines read: the start of its next request,
        read already or waiting in the stream."""
        return bool(self._buffer) or bool(getattr(self._reader, "_buffer", b""))

    async def _read(self, waiting: bool) -> bytes:
        """The next bytes; within daemon.line_timeout when a line is unfinished."""
        if not waiting:
            return await self._reader.read(READ_CHUNK)  # between requests a client may idle as it likes
        try:
            async with asyncio.timeout(self._timeout):
                return await self._reader.read(READ_CHUNK)
        except TimeoutError:
            self.close()
            error = UsageError(
                f"a request line was left unfinished for {self._timeout:g} s; closing the connection",
                "send each request as one line ending in a newline (daemon.line_timeout)",
            )
            raise RefusedLine(error, close=True) from None

    def _hold(self, force: bool = False) -> bool:
        """Hold what the buffer needs of the budget; False when the budget has no room for it."""
        need = max(0, len(self._buffer) - FREE_LINE_BYTES)
        if self._budget.move(self._held, need):
            self._held = need
            return True
        if force:  # the bytes are here already: account for them, over the limit or not
            self._budget.held += need - self._held
            self._held = need
        return False

    def _too_long(self) -> TokaError:
        return UsageError(
            f"request line exceeds {self._limit} bytes", "split the batch, or raise daemon.max_line_bytes"
        )

    def close(self) -> None:
        """Give back what this connection held of the budget."""
        self._buffer.clear()
        self._budget.move(self._held, 0)
        self._held = 0


class ClientProtocol(asyncio.StreamReaderProtocol):
    """A client's stream, which also tells when the client has hung up: closed its connection,
    not merely its sending half (as ``nc -N`` does at the end of its input, still waiting for
    the answer). ``hung_up`` is called then, so that what it asked is not answered for nobody."""

    hung_up: Callable[[], None] | None = None
    _socket_transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._socket_transport = transport
        super().connection_made(transport)

    def eof_received(self) -> bool | None:
        keep_open = super().eof_received()
        transport = self._socket_transport
        if self.hung_up is not None and transport is not None and _peer_closed(transport.get_extra_info("socket")):
            self.hung_up()
        return keep_open

    def connection_lost(self, exc: Exception | None) -> None:
        if self.hung_up is not None:
            self.hung_up()
        super().connection_lost(exc)


def _peer_closed(sock: object) -> bool:
    """Whether the peer of a Unix socket that sent its end of input has closed both halves: the
    kernel then reports a hang-up (POLLHUP), not only the end of what it reads (POLLRDHUP)."""
    fileno = getattr(sock, "fileno", None)
    if fileno is None:
        return False
    poller = select.poll()
    poller.register(fileno(), select.POLLHUP)
    return bool(poller.poll(0))


def read_size(transport: asyncio.BaseTransport) -> None:
    """Make the transport read RECV_SIZE bytes at a time. ``max_size`` is an attribute of
    CPython's selector transports, not a documented setting: where it is missing, reads stay
    as they were."""
    if isinstance(getattr(transport, "max_size", None), int):
        transport.max_size = RECV_SIZE  # type: ignore[attr-defined]


def _room_for(files: int) -> None:
    """Raise the soft limit on open files to ``files`` where the hard limit allows: past it,
    accept() fails before daemon.max_connections is reached."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = files if hard == resource.RLIM_INFINITY else min(files, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    if hard != resource.RLIM_INFINITY and hard < files:
        log.warning("the open-file limit (%d) is below daemon.max_connections and the daemon's own files", hard)
