"""A client connection's lines: read with a size bound of our own, in reads sized for the
allocator, from a peer whose uid is checked."""

from __future__ import annotations

import asyncio
import socket
import struct

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


def read_size(transport: asyncio.BaseTransport) -> None:
    """Make the transport read RECV_SIZE bytes at a time. ``max_size`` is an attribute of
    CPython's selector transports, not a documented setting: where it is missing, reads stay
    as they were."""
    if isinstance(getattr(transport, "max_size", None), int):
        transport.max_size = RECV_SIZE  # type: ignore[attr-defined]


def peer_uid(writer: asyncio.StreamWriter) -> int | None:
    """The uid of the connected process, where the OS tells it (SO_PEERCRED on Linux)."""
    sock = writer.get_extra_info("socket")
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])
