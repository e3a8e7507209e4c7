"""Events a projection cannot apply: the group committer keeps committing, a daemon starts on a
log that holds them, and each one skipped is reported in status and the daemon's log."""

from __future__ import annotations

import asyncio
from typing import Any

from daemon_support import Spawned, Spawner

from daemon.paths import Paths
from store.events import parse_new_event
from store.sqlite.store import SqliteStore

# Events no validation of today lets in, as an older version or a hand-written row could leave
# them: one the context store cannot apply, one the agents' projection cannot.
POISON: list[dict[str, Any]] = [
    {
        "session": "toka.memory",
        "kind": "memory.set",
        "payload": {"scope": "global", "key": "far", "value": 1, "version": 1, "ttl": 1e308, "pinned": False},
    },
    {
        "session": "toka.memory",
        "kind": "memory.set",
        "payload": {"scope": "global", "key": "late", "value": 1, "version": 1, "ttl": 1e12, "pinned": False},
    },
    {"session": "s-bad", "kind": "agent.spawn", "payload": {"agent": ["not", "a", "name"]}},
]


def _writes_work(client: Any) -> None:
    """A memory write and a plain append both commit, and the context store reads back."""
    assert client.call("memory.set", scope="global", key="after", value=2)["version"] == 1
    assert client.call("memory.get", scope="global", key="after")["value"] == 2
    client.record("s-after", "message", {"role": "user", "text": "still here"})


def _skipped(status: dict[str, Any]) -> list[tuple[int, str]]:
    return [(s["seq"], s["kind"]) for s in status["projections"]["recent"]]


def test_the_committer_keeps_committing_after_a_projection_raises(daemon: Spawned) -> None:
    with daemon.client(timeout=10) as client:
        appended = client.call("events.append", events=POISON)
        seqs = [event["seq"] for event in appended["events"]]
        _writes_work(client)
        status = client.call("status")
        listed = client.call("memory.list", scope="global")["entries"]
    assert [e["key"] for e in listed] == ["after"]  # the events skipped left nothing half-applied
    assert status["projections"]["skipped"] == 3
    assert _skipped(status) == [(seqs[0], "memory.set"), (seqs[1], "memory.set"), (seqs[2], "agent.spawn")]
    assert all(f"seq {seq}" in daemon.log() for seq in seqs)


def _write_poison(paths: Paths) -> list[int]:
    async def write() -> list[int]:
        store = await SqliteStore.open(paths.database)
        try:
            results = await store.append([parse_new_event(e) for e in POISON])
        finally:
            await store.close()
        return [r.event.seq for r in results]

    return asyncio.run(write())


def test_a_daemon_starts_on_a_log_holding_events_it_cannot_apply(spawn: Spawner, paths: Paths) -> None:
    first = spawn()
    with first.client() as client:
        client.call("memory.set", scope="global", key="before", value=1)
    first.stop()
    seqs = _write_poison(paths)  # straight into the database file, past every check of the daemon's
    daemon = spawn()
    with daemon.client(timeout=10) as client:
        assert client.call("memory.get", scope="global", key="before")["value"] == 1
        _writes_work(client)
        status = client.call("status")
    assert status["projections"]["skipped"] == 3
    assert sorted(_skipped(status)) == [(seqs[0], "memory.set"), (seqs[1], "memory.set"), (seqs[2], "agent.spawn")]
    log = daemon.log()
    assert all(log.count(f"seq {seq} ") == 1 for seq in seqs)  # once each
