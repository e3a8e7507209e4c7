"""The context store (`memory.*`): compare-and-set under concurrent writers, TTL, scopes,
replay after a restart, pins in the assembled context, and bad input that stores nothing."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from daemon_support import PATIENCE, Spawned, Spawner, wait_for

from daemon.client.sync import Client
from daemon.core import Core
from daemon.memory.service import Memory
from daemon.paths import resolve_paths
from daemon.sections import SECTIONS
from store.base import AppendResult
from store.errors import Conflict, NotFound, UsageError
from store.events import NewEvent
from store.sqlite.store import SqliteStore

WRITERS = 16
# Long enough that a loaded machine still reads the entry before it expires.
TTL_S = 3.0
TRIES = 40


def _increment(daemon: Spawned, successes: list[int]) -> None:
    with daemon.client() as client:
        for _ in range(TRIES):
            try:
                current = client.call("memory.get", scope="global", key="counter")
                value, version = current["value"], current["version"]
            except NotFound:
                value, version = 0, 0
            try:
                client.call("memory.set", scope="global", key="counter", value=value + 1, expect_version=version)
            except Conflict:
                continue
            successes.append(1)


def test_concurrent_compare_and_set_loses_no_update(daemon: Spawned) -> None:
    successes: list[int] = []
    threads = [threading.Thread(target=_increment, args=(daemon, successes)) for _ in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(PATIENCE * 4)
    with daemon.client() as client:
        final = client.call("memory.get", scope="global", key="counter")
        changes = client.call("memory.history", scope="global", key="counter")["changes"]
    assert final["value"] == len(successes) == final["version"]
    assert [c["value"] for c in changes] == list(range(1, len(successes) + 1))
    assert len(successes) >= TRIES  # at least one writer's worth got through


def test_versions_scopes_and_deletion(daemon: Spawned) -> None:
    with daemon.client() as client:
        assert client.call("memory.set", scope="session:a", key="k", value={"n": 1})["version"] == 1
        assert client.call("memory.set", scope="session:b", key="k", value="other")["version"] == 1
        assert client.call("memory.set", scope="session:a", key="k", value={"n": 2}, expect_version=1)["version"] == 2
        assert client.call("memory.get", scope="session:b", key="k")["value"] == "other"  # scopes do not mix
        with pytest.raises(Conflict, match="at version 2, not 7"):
            client.call("memory.set", scope="session:a", key="k", value=3, expect_version=7)
        client.call("memory.delete", scope="session:a", key="k")
        with pytest.raises(NotFound, match="not set"):
            client.call("memory.get", scope="session:a", key="k")
        # After a deletion the key reads as version 0 for compare-and-set; versions keep counting.
        assert client.call("memory.set", scope="session:a", key="k", value=9, expect_version=0)["version"] == 4
        listed = client.call("memory.list", scope="session:a")["entries"]
        assert [(e["key"], e["value"]) for e in listed] == [("k", 9)]


def test_an_entry_with_a_ttl_too_short_to_read_is_expired_through_the_daemon(daemon: Spawned) -> None:
    with daemon.client() as client:
        short = client.call("memory.set", scope="global", key="short", value=1, ttl=TTL_S)
        client.call("memory.set", scope="global", key="none", value=1, ttl=1e-6)
        assert client.call("memory.get", scope="global", key="short")["value"] == 1
        assert short["expires_ts"] is not None
        with pytest.raises(NotFound, match="expired"):
            client.call("memory.get", scope="global", key="none")
        assert [e["key"] for e in client.call("memory.list", scope="global")["entries"]] == ["short"]


def test_an_entry_expires_once_the_core_clock_passes_its_ttl(tmp_path: Path) -> None:
    """The memory reads the core's clock: moving it past an entry's expiry expires the entry,
    with no wait for the time to pass."""

    async def main() -> None:
        store = await SqliteStore.open(tmp_path / "toka.db")
        now = [time.time()]

        async def append(events: Sequence[NewEvent]) -> list[AppendResult]:
            results = await store.append(events)
            for result in results:  # handed over as the daemon hands each commit to the table
                memory.apply(result.event)
            return results

        memory = Memory(Core(store, append, SECTIONS.defaults(), resolve_paths(), clock=lambda: now[0]))
        try:
            written = await memory.set("global", "short", 1, ttl=60.0)
            assert written.expires_ts is not None
            now[0] = written.expires_ts / 1_000_000 - 1
            assert memory.get("global", "short").value == 1
            now[0] = written.expires_ts / 1_000_000 + 0.001
            with pytest.raises(NotFound, match="expired"):
                memory.get("global", "short")
            assert memory.entries("global") == []
            # Its key's next version starts where it stopped, as with a deleted key.
            assert (await memory.set("global", "short", 2, expect=0)).version == 2
        finally:
            await store.close()

    asyncio.run(main())


def test_a_restarted_daemon_replays_the_same_table(spawn: Spawner) -> None:
    daemon = spawn()
    with daemon.client() as client:
        client.call("memory.set", scope="trace:t1", key="goal", value="ship it", pinned=True)
        client.call("memory.set", scope="agent:a1", key="n", value=1)
        client.call("memory.set", scope="agent:a1", key="n", value=2)
        client.call("memory.set", scope="global", key="gone", value=0)
        client.call("memory.delete", scope="global", key="gone")
        before = client.call("memory.list")["entries"]
    daemon.stop()
    daemon = spawn()
    with daemon.client() as client:
        assert client.call("memory.list")["entries"] == before
        assert client.call("memory.set", scope="agent:a1", key="n", value=3, expect_version=2)["version"] == 3


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ({"scope": "planet:x", "key": "k", "value": 1}, UsageError, "unknown scope"),
        ({"scope": "global", "key": "", "value": 1}, UsageError, "a key is 1 to 256"),
        ({"scope": "global", "key": "k" * 300, "value": 1}, UsageError, "a key is 1 to 256"),
        ({"scope": "global", "key": "k", "value": "x" * (1024 * 1024 + 10)}, UsageError, "more than 1,048,576"),
        ({"scope": "global", "key": "k", "value": 1, "ttl": -1}, UsageError, "ttl must be"),
        ({"scope": "global", "key": "k", "value": 1, "ttl": 0}, UsageError, "ttl must be"),
        ({"scope": "global", "key": "k", "value": 1, "ttl": 1e308}, UsageError, "at most 315,360,000"),
        ({"scope": "global", "key": "k", "value": 1, "ttl": 1e12}, UsageError, "at most 315,360,000"),
        ({"scope": "global", "key": "k", "value": 1, "ttl": float("inf")}, UsageError, "'ttl' must be a finite"),
        ({"scope": "global", "key": "k", "value": 1, "ttl": float("nan")}, UsageError, "'ttl' must be a finite"),
        ({"scope": "global", "key": "k", "value": float("nan")}, UsageError, "'value' must be a finite number"),
        ({"scope": "global", "key": "k", "value": {"a": [float("-inf")]}}, UsageError, "NaN or Infinity"),
        ({"scope": "global", "key": "k"}, UsageError, "'value' is required"),
        ({"scope": "global", "key": "k", "value": 1, "expect_version": 3}, Conflict, "not 3"),
    ],
)
def test_bad_writes_store_nothing(module_daemon: Spawned, args: dict[str, Any], error: type, message: str) -> None:
    """The cases share one daemon: none of them stores anything, so none sees another's writes."""
    with module_daemon.client() as client:
        before = client.call("stats")["events"]
        with pytest.raises(error, match=message):
            client.call("memory.set", **args)
        assert client.call("stats")["events"] == before


def test_pinned_entries_go_first_into_the_context(daemon: Spawned) -> None:
    with daemon.client() as client:
        client.record("work", "message", {"role": "user", "text": "Refactor the parser"})
        client.call("memory.set", scope="session:work", key="style", value="small commits", pinned=True)
        client.call("memory.set", scope="session:work", key="scratch", value="not pinned")
        client.call("memory.set", scope="session:elsewhere", key="x", value="other session", pinned=True)
        document = client.call("context", session="work", budget=10_000)
    assert document["parts"]["memory"]["items"] == 1
    assert document["messages"][0] == {"role": "system", "content": '[memory session:work style] "small commits"'}


def test_watch_streams_the_changes_of_a_scope(daemon: Spawned) -> None:
    toka = os.path.join(os.path.dirname(sys.executable), "toka")
    watcher = subprocess.Popen(
        [toka, "memory", "watch", "session:w", "--json"], stdout=subprocess.PIPE, text=True, env=os.environ.copy()
    )
    try:
        with daemon.client() as client:
            wait_for(lambda: client.call("status")["subscribers"] == 1, "the watcher to subscribe")
            client.call("memory.set", scope="session:other", key="k", value=0)
            client.call("memory.set", scope="session:w", key="k", value=1)
        assert watcher.stdout is not None
        line = json.loads(watcher.stdout.readline())
    finally:
        watcher.terminate()
        watcher.wait(PATIENCE)
    assert (line["scope"], line["key"], line["value"], line["version"], line["kind"]) == (
        "session:w",
        "k",
        1,
        1,
        "memory.set",
    )


def test_the_client_speaks_memory_over_the_protocol(daemon: Spawned) -> None:
    with Client(daemon.paths, autostart=False) as client:
        entry = client.call("memory.set", scope="global", key="k", value=[1, 2])
    assert set(entry) == {"scope", "key", "value", "version", "pinned", "set_ts", "expires_ts", "seq"}
