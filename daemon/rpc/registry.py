"""The op registry: what each operation is, declared where it is handled.

A component's ops module makes one :class:`Ops` for the component its handlers are handed (the
lifecycle, the memory, the pool...) and declares each op with it: its name, its request
(a dataclass of daemon/rpc/requests.py), whether it streams (answers with lines until the
client hangs up or sends anything) and whether it reports progress (``{"progress": true}`` in
the request asks for ``{id, progress: {done, total}}`` lines), and whether the connection's next
requests are read while it runs (``pipelined``: appends, daemon/server/serving.py). A handler is called as
``handler(component, request, call)`` and returns the result; it never sees the daemon.

The server (daemon/server/process.py) collects every component's :class:`Ops` into one
:class:`Registry` and hands each op its component.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from daemon.rpc.requests import parse
from store.errors import UsageError

Send = Callable[[dict[str, Any] | bytes], Coroutine[Any, Any, None]]  # a message, or a whole line
Progress = Callable[[int, int], None]


@dataclass(slots=True)
class Call:
    """One request, beyond its arguments: its id, how to send more lines, whether the client
    has gone (or, during a stream, sent anything), and the progress callback when asked for."""

    request_id: Any
    send: Send
    closed: asyncio.Event
    progress: Progress | None = None

    async def progress_sent(self) -> None:
        """Let the progress lines already queued go out before the answer."""
        if self.progress is not None:
            await asyncio.sleep(0)


Handler = Callable[[Any, Any, Call], Awaitable[Any]]
H = TypeVar("H", bound=Handler)


@dataclass(frozen=True, slots=True)
class Op:
    name: str
    component: type
    request: type
    handler: Handler
    streaming: bool = False
    progress: bool = False
    pipelined: bool = False  # the connection's next requests are read while it runs (an append)

    def parse(self, args: dict[str, Any]) -> Any:
        return parse(self.request, args)


class Ops:
    """The ops of one component (a class, or a protocol the component follows)."""

    def __init__(self, component: type) -> None:
        self.component = component
        self.ops: list[Op] = []

    def op(
        self, name: str, request: type, *, streaming: bool = False, progress: bool = False, pipelined: bool = False
    ) -> Callable[[H], H]:
        def declare(handler: H) -> H:
            self.ops.append(Op(name, self.component, request, handler, streaming, progress, pipelined))
            return handler

        return declare


class Registry:
    """Every op the daemon answers, by name."""

    def __init__(self, groups: Iterable[Ops]) -> None:
        self.ops: dict[str, Op] = {}
        for group in groups:
            for op in group.ops:
                if op.name in self.ops:
                    raise ValueError(f"op {op.name!r} declared twice")
                self.ops[op.name] = op

    def __getitem__(self, name: str) -> Op:
        op = self.ops.get(name)
        if op is None:
            raise UsageError(f"unknown operation {name!r}", f"known operations: {', '.join(sorted(self.ops))}")
        return op

    def components(self) -> set[type]:
        return {op.component for op in self.ops.values()}


@dataclass(frozen=True, slots=True)
class _ProgressFlag:
    progress: bool = False  # send progress lines


def wants_progress(op: Op, args: dict[str, Any]) -> bool:
    """Whether a request to ``op`` asked for progress lines (sent only by ops that declare progress)."""
    return op.progress and parse(_ProgressFlag, args).progress


def progress_sender(call_send: Send, request_id: Any, gone: asyncio.Event | None = None) -> Progress:
    """A progress callback sending ``{id, progress: {done, total}}`` lines. When a line cannot be
    sent, the client has hung up: no more are sent, and ``gone`` is set (the call's ``closed``), so
    that a long op can stop early."""
    loop = asyncio.get_running_loop()
    hung_up = gone or asyncio.Event()
    sending: set[asyncio.Task[None]] = set()  # held until sent: the loop keeps only weak references

    async def send(line: dict[str, Any]) -> None:
        if hung_up.is_set():
            return
        try:
            await call_send(line)
        except ConnectionError:
            hung_up.set()

    def progress(done: int, total: int) -> None:
        task = loop.create_task(send({"id": request_id, "progress": {"done": done, "total": total}}))
        sending.add(task)
        task.add_done_callback(sending.discard)

    return progress
