"""The asyncio client, for the TUI and for Python agent loops that already run an event loop.

Same protocol, same errors and same autostart as :class:`daemon.client.sync.Client`; requests on one
connection are answered in order, so calls are serialised with a lock and a subscription takes
a connection of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from daemon.client.socket import DaemonNotRunning, check_peer
from daemon.client.sync import ProgressFn
from daemon.ownership import private_dir
from daemon.paths import Paths, resolve_paths
from daemon.protocol import decode, request, result_of
from daemon.version import PROTOCOL_VERSION
from store.errors import DaemonUnavailable, ProtocolError, UnsafePath

if TYPE_CHECKING:
    from daemon.contract.results import Event

# The daemon bounds request lines; answers (a page of events) may be larger than asyncio's
# default 64 KiB line limit.
READ_LIMIT = 256 * 1024 * 1024


class AsyncClient:
    def __init__(self, paths: Paths | None = None, *, autostart: bool = True) -> None:
        self.paths = paths or resolve_paths()
        self.autostart = autostart
        self.server: dict[str, Any] = {}
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._lock = asyncio.Lock()
        self._next_id = 0

    async def __aenter__(self) -> AsyncClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to the daemon, checked as the sync client checks it (daemon/client/socket.py)."""
        self.paths.check_socket_length()
        try:
            if not private_dir(self.paths.runtime_dir, create=False):
                raise FileNotFoundError
            reader, writer = await asyncio.open_unix_connection(str(self.paths.socket), limit=READ_LIMIT)
        except (FileNotFoundError, ConnectionRefusedError):
            raise DaemonNotRunning("the toka daemon is not running", "start it with `toka daemon start`") from None
        except OSError as exc:
            raise DaemonUnavailable(f"cannot reach the daemon at {self.paths.socket}: {exc.strerror}") from None
        try:
            check_peer(writer.get_extra_info("socket"), self.paths.socket)
        except UnsafePath:
            writer.transport.abort()
            raise
        return reader, writer

    async def connect(self) -> None:
        try:
            self._reader, self._writer = await self._open()
        except DaemonNotRunning:
            if not self.autostart:
                raise
            from daemon.client.autostart import start_daemon

            await asyncio.to_thread(start_daemon, self.paths)
            self._reader, self._writer = await self._open()
        self.server = await self.call("hello")
        if self.server.get("protocol") != PROTOCOL_VERSION:
            await self.close()
            raise ProtocolError(
                f"the daemon speaks protocol {self.server.get('protocol')}, this toka speaks {PROTOCOL_VERSION}",
                "run `toka daemon restart`",
            )

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(OSError):
                await self._writer.wait_closed()
            self._writer = None

    async def _send(self, writer: asyncio.StreamWriter, line: bytes) -> None:
        try:
            writer.write(line)
            await writer.drain()
        except OSError as exc:  # the daemon went away: the same error as the sync client's
            raise DaemonUnavailable(f"lost the connection to the daemon: {exc}", "retry") from None

    async def _receive(self, reader: asyncio.StreamReader) -> dict[str, Any]:
        try:
            line = await reader.readline()
        except (OSError, ValueError) as exc:
            raise DaemonUnavailable(f"lost the connection to the daemon: {exc}", "retry") from None
        if not line:
            raise DaemonUnavailable("the daemon closed the connection", "see `toka daemon logs`")
        return decode(line)

    async def call(self, op: str, progress: ProgressFn | None = None, **args: Any) -> Any:
        if self._reader is None or self._writer is None:
            raise DaemonUnavailable("the client is not connected", "use `async with AsyncClient()`")
        if progress is not None:
            args["progress"] = True
        async with self._lock:
            self._next_id += 1
            request_id = self._next_id
            await self._send(self._writer, request(request_id, op, args))
            while True:
                message = await self._receive(self._reader)
                if message.get("id") != request_id and message.get("id") is not None:
                    continue
                if "progress" in message:
                    if progress is not None:
                        progress(message["progress"]["done"], message["progress"]["total"])
                    continue
                return result_of(message)

    async def append(self, events: list[dict[str, Any]], session: str | None = None) -> list[dict[str, Any]]:
        args: dict[str, Any] = {"events": events}
        if session is not None:
            args["session"] = session
        result: list[dict[str, Any]] = (await self.call("events.append", **args))["events"]
        return result

    async def record(self, session: str, kind: str, payload: dict[str, Any], **fields: Any) -> dict[str, Any]:
        return (await self.append([{"session": session, "kind": kind, "payload": payload, **fields}]))[0]

    async def subscribe(self, **args: Any) -> AsyncIterator[Event]:
        """Events as they commit, on a connection of their own, until the caller stops."""
        reader, writer = await self._open()
        try:
            await self._send(writer, request(1, "events.subscribe", args))
            result_of(await self._receive(reader))
            while True:
                message = await self._receive(reader)
                if "event" in message:
                    yield message["event"]
                else:
                    result_of(message)
                    return
        finally:
            writer.close()
