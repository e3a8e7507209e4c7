"""Serving the clients' connections: each connection's requests read (daemon/server/connection.py
holds them within the daemon's bounds), answered in the order they came, with what the daemon
owes them for a clean shutdown (who is connected, what is being answered, which streams run).

Requests are answered inline, on their connection's task: one event-loop turn less each. Appends
whose client has sent more behind them are the exception: while such an append commits, the
connection's next request is read and decoded, and when it is an append too it is handed to the
group committer at once (up to ``APPENDS_IN_FLIGHT`` per connection, holding at most
``APPEND_BYTES_IN_FLIGHT`` of request lines). Those appends queue for the committer rather than
commit one by one (daemon/server/commit.py, ``followed``): the requests already read share one
commit. A client that sends appends without waiting for each answer (``toka import``, a
pipelined writer) keeps the writer busy while the daemon decodes what comes next, and one
writer is not bound by round trips. Their answers go out through the connection's
:class:`Outbox`, in request order, those ready in the same turn of the event loop in one write
(one system call for a group, not one an answer). Every other request waits until the appends before it are
answered, so it sees them; answers go out in request order.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from daemon.protocol import encode, error_message
from daemon.rpc.registry import Call, Op, progress_sender, wants_progress
from daemon.rpc.wire import RawJson
from daemon.server.catalog import REGISTRY
from daemon.server.commit import followed
from daemon.server.connection import ClientProtocol, Gate, LineReader, RefusedLine, read_size
from store.errors import Busy, TokaError, UsageError
from store.requester import RequestAbandoned, requester_gone

log = logging.getLogger("toka.daemon")

# Appends one connection may have committing while its next requests are read: each holds its
# decoded request until it is answered, so their lines' bytes are bounded too (one line of
# daemon.max_line_bytes is always let through). A client with 32 single-event requests in flight
# then has them committed in groups of up to 32.
APPENDS_IN_FLIGHT = 32
APPEND_BYTES_IN_FLIGHT = 4 * 1024 * 1024
_STREAMED = object()  # what a streaming op returns: its lines are its answer


class Connections:
    """The daemon's connections: each one served by :meth:`serve`."""

    def __init__(self, gate: Gate, components: Mapping[type, Any], stopping: Callable[[], bool]) -> None:
        self.gate = gate
        self.components = components
        self._stopping = stopping
        self.clients = 0
        self.writers: set[asyncio.StreamWriter] = set()
        self.in_flight = 0
        self.idle = asyncio.Event()  # set while no request is being answered
        self.idle.set()
        self.streams: set[asyncio.Event] = set()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        refusal = self.gate.refusal(writer, self.clients)
        if refusal is not None:
            writer.write(encode(error_message(None, refusal)))
            writer.close()
            return
        self.clients += 1
        self.writers.add(writer)
        read_size(writer.transport)
        lines = self.gate.lines(reader)
        closed = asyncio.Event()
        protocol = writer.transport.get_protocol()
        if isinstance(protocol, ClientProtocol):  # reads asked for a client that hung up are skipped
            protocol.hung_up = closed.set
            requester_gone.set(closed.is_set)  # in this connection's task only
        outbox = Outbox(writer)
        appending: deque[tuple[asyncio.Task[None], int]] = deque()  # appends being committed, and their lines' sizes
        held = 0  # bytes of the lines of the appends in flight

        async def send(message: dict[str, Any] | bytes) -> None:
            writer.write(message if isinstance(message, bytes) else encode(message))
            await writer.drain()

        async def oldest_answered() -> None:
            nonlocal held
            task, size = appending.popleft()
            held -= size
            await task

        async def answered() -> None:
            """Every append before this point answered."""
            while appending:
                await oldest_answered()

        try:
            while not self._stopping():
                try:
                    line = await lines.next()
                except RefusedLine as refused:  # too long, over the daemon's budget, or left unfinished
                    await answered()
                    await send(error_message(None, refused.error))
                    if refused.close:
                        break
                    continue
                if line is None:
                    break
                if not line.strip():
                    continue
                self._begin()
                try:
                    asked = self._decode(line, send, closed)
                    # Pipelined only when the client has sent more already: a client that waits for
                    # each answer (a hook) is answered inline, without a task's extra turn.
                    if (
                        isinstance(asked, Asked)
                        and asked.op.pipelined
                        and (appending or lines.more_sent())
                        and not self._stopping()
                    ):
                        while appending and (
                            len(appending) >= APPENDS_IN_FLIGHT or held + len(line) > APPEND_BYTES_IN_FLIGHT
                        ):
                            await oldest_answered()
                        self._begin()  # now, not when the task first runs: shutdown waits for it
                        task = asyncio.create_task(self._pipelined(asked, outbox, outbox.reserve()))
                        task.add_done_callback(lambda _: self._end())
                        appending.append((task, len(line)))
                        held += len(line)
                        continue
                    await answered()
                    await self._answer(asked, send, lines)
                except RequestAbandoned:
                    break  # its client has gone: nothing to answer, nobody to read from
                finally:
                    self._end()
            await answered()
        except ConnectionError:
            pass
        finally:
            for task, _ in appending:  # the client has gone: what it asked to append commits all the same
                task.add_done_callback(_retrieved)
            lines.close()
            self.clients -= 1
            self.writers.discard(writer)
            closed.set()
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _begin(self) -> None:
        self.in_flight += 1
        self.idle.clear()

    def _end(self) -> None:
        self.in_flight -= 1
        if not self.in_flight:
            self.idle.set()

    def _decode(self, line: bytes, send: Any, closed: asyncio.Event) -> Asked | Refused:
        """The request a line holds, ready to answer, or the error to answer it with."""
        request_id = None
        try:
            try:
                message = json.loads(line)
            except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
                raise UsageError(f"request is not valid JSON ({exc})", "send one JSON object per line") from None
            if not isinstance(message, dict):
                raise UsageError("a request must be a JSON object with 'op'")
            request_id = message.get("id")
            name = message.get("op")
            args = message.get("args", {})
            if not isinstance(name, str):
                raise UsageError("a request needs 'op', a string", 'e.g. {"id": 1, "op": "status"}')
            if not isinstance(args, dict):
                raise UsageError("'args' must be a JSON object")
            op = REGISTRY[name]
            if self._stopping():
                raise Busy("the daemon is shutting down", "retry once it has restarted")
            request = op.parse(args)
            call = Call(request_id, send, closed)
            if wants_progress(op, args):
                call.progress = progress_sender(send, request_id, call.closed)
            return Asked(op, request, call, self.components[op.component])
        except TokaError as exc:
            return Refused(request_id, exc)

    async def _pipelined(self, asked: Asked, outbox: Outbox, slot: Slot) -> None:
        """An append answered once it has committed, after the appends before it."""
        followed.set(True)  # in this task's context: it queues for a group with those behind it
        line = b""  # what fills the slot if this raises: the answers behind it still go out
        try:
            line = _answer_line(await self._run(asked), asked.call.request_id)
        finally:
            outbox.fill(slot, line)
        await outbox.sent(slot)

    async def _answer(self, asked: Asked | Refused, send: Any, lines: LineReader) -> None:
        if isinstance(asked, Refused):
            await send(error_message(asked.request_id, asked.error))
            return
        outcome = await self._run(asked, lines)
        if outcome is not _STREAMED:
            await send(_answer_line(outcome, asked.call.request_id))

    async def _run(self, asked: Asked, lines: LineReader | None = None) -> Any:
        """The handler's result (_STREAMED for a stream, which answered itself), or the error (a
        TokaError) to answer with."""
        request_id = asked.call.request_id
        try:
            if asked.op.streaming and lines is not None:
                await self._stream(asked, lines)
                return _STREAMED
            return await asked.op.handler(asked.component, asked.request, asked.call)
        except TokaError as exc:
            return exc
        except (ConnectionError, asyncio.CancelledError):
            raise
        except Exception as exc:  # a bug must cost one request, never the daemon
            log.exception("request %r failed", request_id)
            return TokaError(f"internal error: {exc}", "see `toka daemon logs`")

    async def _stream(self, asked: Asked, lines: LineReader) -> None:
        """Run a streaming op until it ends or the client hangs up or sends anything."""
        call = asked.call
        call.closed = asyncio.Event()  # this stream's own: the connection may stream again after it
        self.streams.add(call.closed)

        async def watch_client() -> None:
            with contextlib.suppress(RefusedLine, ConnectionError):
                await lines.next()
            call.closed.set()

        watcher = asyncio.create_task(watch_client())
        try:
            await asked.op.handler(asked.component, asked.request, call)
        finally:
            watcher.cancel()
            self.streams.discard(call.closed)
        call.closed.set()


def _answer_line(outcome: Any, request_id: Any) -> bytes:
    """The line that answers a request with the handler's result, or with its error."""
    if isinstance(outcome, TokaError):
        return encode(error_message(request_id, outcome))
    if isinstance(outcome, RawJson):
        head = json.dumps({"id": request_id, "ok": True}, ensure_ascii=False)[:-1]
        return f'{head},"result":{outcome.text}}}\n'.encode()
    return encode({"id": request_id, "ok": True, "result": outcome})


class Slot:
    """An answer's place in its connection's :class:`Outbox`: its line once it is ready, and
    what its sender waits on until the line is written."""

    __slots__ = ("line", "written")

    def __init__(self, written: asyncio.Future[None]) -> None:
        self.line: bytes | None = None
        self.written = written


class Outbox:
    """The answers of a connection's pipelined appends, written in the order their requests
    came. A slot is reserved when a request is read; its answer fills it; the answers ready at
    the head are written together once the callbacks of the event loop's turn have run, so a
    group committed together is answered in one write."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._slots: deque[Slot] = deque()
        self._flushing = False

    def reserve(self) -> Slot:
        slot = Slot(asyncio.get_running_loop().create_future())
        self._slots.append(slot)
        return slot

    def fill(self, slot: Slot, line: bytes) -> None:
        """The answer of ``slot`` (empty: none), written at the end of this turn of the event
        loop once the slots before it are filled."""
        slot.line = line
        if not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().call_soon(self._flush)

    async def sent(self, slot: Slot) -> None:
        """Once ``slot``'s answer is written and the transport has room for more."""
        await slot.written
        await self._writer.drain()

    def _flush(self) -> None:
        self._flushing = False
        lines: list[bytes] = []
        while self._slots and (line := self._slots[0].line) is not None:
            slot = self._slots.popleft()
            lines.append(line)
            if not slot.written.done():
                slot.written.set_result(None)
        data = b"".join(lines)
        if data and not self._writer.is_closing():  # a client gone: what it asked committed all the same
            self._writer.write(data)


class Asked:
    """A request decoded: its op, its typed arguments, its call and the op's component."""

    __slots__ = ("op", "request", "call", "component")

    def __init__(self, op: Op, request: Any, call: Call, component: Any) -> None:
        self.op, self.request, self.call, self.component = op, request, call, component


class Refused:
    """A line that holds no request the daemon answers, and the error it is answered with."""

    __slots__ = ("request_id", "error")

    def __init__(self, request_id: Any, error: TokaError) -> None:
        self.request_id, self.error = request_id, error


def _retrieved(task: asyncio.Task[None]) -> None:
    """Collect the outcome of an append whose client has gone (its answer could not be sent)."""
    if not task.cancelled():
        task.exception()
