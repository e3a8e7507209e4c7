"""The asyncio client against a real daemon: calls, records, subscriptions and typed errors."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any, cast

import pytest
from daemon_support import Spawned

from daemon.client.aio import AsyncClient
from daemon.client.connect import DaemonNotRunning
from daemon.paths import Paths
from store.errors import (
    DaemonUnavailable,
    InvalidEvent,
    NotFound,
    TokaError,
    UsageError,
)


def test_call_and_record(daemon: Spawned) -> None:
    async def main() -> None:
        async with AsyncClient(daemon.paths, autostart=False) as client:
            assert client.server["pid"] == daemon.process.pid
            first = await client.record("s", "message", {"text": "hi"}, agent="claude")
            second = await client.record("s", "tool.call", {"tool": "ls"})
            assert (first["seq"], second["seq"]) == (1, 2)
            got = await client.call("events.get", id=second["id"])
            assert got["parents"] == [first["id"]] and got["payload"] == {"tool": "ls"}
            page = await client.call("events.query", session="s")
            assert [e["id"] for e in page["events"]] == [first["id"], second["id"]]
            assert page["events"][0]["agent"] == "claude"
            # Concurrent calls on one client are serialised, each gets its own answer.
            results = await asyncio.gather(*(client.record("t", "k", {"n": n}) for n in range(20)))
            assert sorted(r["seq"] for r in results) == list(range(3, 23))
            status = await client.call("status")
            assert status["events"] == 22

    asyncio.run(main())


def test_subscribe_streams_backlog_then_live_events(daemon: Spawned) -> None:
    async def main() -> None:
        async with AsyncClient(daemon.paths, autostart=False) as client:
            first = await client.record("s", "message", {"n": 0})
            stream = cast(AsyncGenerator[dict[str, Any], None], client.subscribe(session="s", after_seq=0))
            received = [await asyncio.wait_for(anext(stream), 10)]  # the backlog
            live = await client.record("s", "message", {"n": 1})
            await client.record("other", "message", {})  # filtered out
            last = await client.record("s", "message", {"n": 2})
            received.append(await asyncio.wait_for(anext(stream), 10))
            received.append(await asyncio.wait_for(anext(stream), 10))
            assert [e["id"] for e in received] == [first["id"], live["id"], last["id"]]
            assert (await client.call("status"))["subscribers"] == 1
            await stream.aclose()  # its own connection closes
            for _ in range(500):
                if (await client.call("status"))["subscribers"] == 0:
                    break
                await asyncio.sleep(0.01)
            else:
                pytest.fail("the subscriber count did not drop to 0")

    asyncio.run(main())


def test_errors_arrive_as_the_matching_toka_error(daemon: Spawned) -> None:
    async def main() -> None:
        async with AsyncClient(daemon.paths, autostart=False) as client:
            expectations: list[tuple[type[TokaError], str, Any]] = [
                (NotFound, "not_found", client.call("events.get", id="0" * 64)),
                (NotFound, "not_found", client.call("sessions.get", session="nope")),
                (UsageError, "bad_request", client.call("events.explode")),
                (UsageError, "bad_request", client.call("events.query", limit="x")),
                (InvalidEvent, "invalid_event", client.record("s", "not a kind!", {})),
                (InvalidEvent, "invalid_event", client.append([{"session": "s", "payload": {}}])),
            ]
            for cls, code, call in expectations:
                with pytest.raises(cls) as raised:
                    await call
                assert type(raised.value) is cls and raised.value.code == code
                assert raised.value.message
            with pytest.raises(TokaError):
                async for _ in client.subscribe(kinds="not a list"):
                    pass
            # The client is still in step with its connection after all those errors.
            assert (await client.record("s", "message", {}))["seq"] == 1

    asyncio.run(main())


def test_no_daemon_and_no_autostart_raises_daemon_unavailable(paths: Paths) -> None:
    async def main() -> None:
        async with AsyncClient(paths, autostart=False):
            pass

    with pytest.raises(DaemonUnavailable) as raised:
        asyncio.run(main())
    assert isinstance(raised.value, DaemonNotRunning)
    assert raised.value.hint is not None and "toka daemon start" in raised.value.hint


def test_daemon_going_away_raises_daemon_unavailable(daemon: Spawned) -> None:
    async def main() -> None:
        async with AsyncClient(daemon.paths, autostart=False) as client:
            await client.call("shutdown")
            await asyncio.to_thread(daemon.process.wait, 15)
            with pytest.raises(DaemonUnavailable):
                await client.call("status")

    asyncio.run(main())


def test_call_before_connect_raises_daemon_unavailable(daemon: Spawned) -> None:
    async def main() -> None:
        client = AsyncClient(daemon.paths, autostart=False)
        with pytest.raises(DaemonUnavailable, match="not connected"):
            await client.call("status")

    asyncio.run(main())
