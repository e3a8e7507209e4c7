"""What the forwarder and `toka export otel` read of a collector's answer: no more than a bounded
start of it, however much the collector sends, and a collector that does not answer in time is
named with the time it had."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field

import pytest
from aiohttp import web
from daemons import PATIENCE, Spawned, Spawner, wait_for
from export_support import SMALL_SPANS, append, small_session, toka

MiB = 1024 * 1024
# What the collector offers to send: far more than any answer the forwarder needs to read.
OFFERED = 200 * MiB


@dataclass
class StreamingCollector:
    """A collector on aiohttp, in a thread with its own loop, whose answer ``respond`` writes;
    it counts the bytes of answers written and the requests finished."""

    respond: Callable[[StreamingCollector, web.Request], Awaitable[web.StreamResponse]]
    written: int = 0
    finished: threading.Event = field(default_factory=threading.Event)
    url: str = ""
    _loop: asyncio.AbstractEventLoop | None = None
    _runner: web.AppRunner | None = None

    def start(self) -> StreamingCollector:
        started = threading.Event()

        async def handle(request: web.Request) -> web.StreamResponse:
            await request.read()
            try:
                return await self.respond(self, request)
            finally:
                self.finished.set()

        async def serve() -> None:
            app = web.Application()
            app.router.add_post("/v1/traces", handle)
            self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            port = self._runner.addresses[0][1]
            self.url = f"http://127.0.0.1:{port}"
            started.set()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(serve())
            self._loop.run_forever()

        threading.Thread(target=run, daemon=True).start()
        assert started.wait(PATIENCE)
        return self

    def stop(self) -> None:
        if self._loop is not None and self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(PATIENCE)
            self._loop.call_soon_threadsafe(self._loop.stop)


async def huge_answer(collector: StreamingCollector, request: web.Request) -> web.StreamResponse:
    """200 with OFFERED bytes of body, written as fast as the reader takes them."""
    answer = web.StreamResponse(status=200, headers={"Content-Type": "application/x-protobuf"})
    answer.content_length = OFFERED
    await answer.prepare(request)
    chunk = b"\0" * MiB
    try:
        while collector.written < OFFERED:
            await answer.write(chunk)
            collector.written += len(chunk)
    except (ConnectionError, RuntimeError):
        pass  # the reader hung up: as it should, long before the end
    return answer


async def no_answer(collector: StreamingCollector, request: web.Request) -> web.StreamResponse:
    await asyncio.Event().wait()  # never set: the request is left without an answer
    raise AssertionError("unreachable")


@pytest.fixture
def streaming() -> Iterator[Callable[..., StreamingCollector]]:
    started: list[StreamingCollector] = []

    def start(
        respond: Callable[[StreamingCollector, web.Request], Awaitable[web.StreamResponse]],
    ) -> StreamingCollector:
        started.append(StreamingCollector(respond).start())
        return started[-1]

    yield start
    for collector in started:
        collector.stop()


def test_a_collector_answering_with_a_huge_body_is_not_read_whole(
    spawn: Spawner, streaming: Callable[..., StreamingCollector]
) -> None:
    collector = streaming(huge_answer)
    daemon: Spawned = spawn(env={"TOKA_EXPORT_OTLP_ENDPOINT": collector.url, "TOKA_EXPORT_OTLP_SESSION_IDLE_S": "0.5"})

    append(small_session("huge"))

    assert collector.finished.wait(PATIENCE), "the forwarder posted nothing"
    status = wait_for(lambda: (s := daemon.status()["export"])["sent_spans"] >= SMALL_SPANS - 1 and s, "spans sent")
    assert status["last_error"] is None
    # The forwarder read the start of the answer and hung up: what the collector got to write is
    # that start and what the sockets' buffers held, nowhere near what it offered.
    assert collector.written < 32 * MiB


def test_a_collector_that_does_not_answer_is_named_with_its_time(
    spawn: Spawner, streaming: Callable[..., StreamingCollector]
) -> None:
    collector = streaming(no_answer)
    spawn(env={"TOKA_EXPORT_OTLP_REQUEST_TIMEOUT_S": "0.2", "TOKA_EXPORT_OTLP_RETRY_MAX_S": "0.01"})
    append(small_session("silent"))

    result = toka("export", "otel", "--endpoint", collector.url)

    assert result.returncode == 1
    error = result.stderr.splitlines()[0]
    assert error.startswith(f"error: the collector at {collector.url}/v1/traces did not answer within 0.2 s"), error
    assert "CancelledError" not in result.stderr
