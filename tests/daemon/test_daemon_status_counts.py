"""`status` counts the log's events and sessions as the log holds them after every kind of write:
an append committed on the event loop or on the writer's thread, a prune, a rebuild (the SQLite
store keeps the counts it read until it writes again, store/sqlite/store.py)."""

from __future__ import annotations

from typing import Any

from daemon_support import Spawned

from daemon.client.sync import Client

OLD = 1_577_836_800  # 2020-01-01, in Unix seconds


def counts(client: Client) -> tuple[int, int]:
    status = client.call("status")
    return status["events"], status["sessions"]


def in_the_log(client: Client) -> tuple[int, int]:
    """What the log holds, read without the status document's counts."""
    listed: list[dict[str, Any]] = client.call("sessions.list")["sessions"]
    return sum(s["events"] for s in listed), len(listed)


def test_status_counts_follow_every_write(daemon: Spawned) -> None:
    with daemon.client() as client:
        assert counts(client) == (0, 0)
        client.record("a", "note", {"n": 1})  # alone: committed on the event loop
        assert counts(client) == in_the_log(client) == (1, 1)
        client.append([{"session": "b", "kind": "note", "payload": {"n": n}} for n in range(400)])
        assert counts(client) == in_the_log(client) == (401, 2)
        client.append([{"session": "old", "kind": "note", "payload": {"n": n}, "ts": OLD + n} for n in range(5)])
        assert counts(client) == (406, 3)

        client.call("log.prune", before="2021-01-01T00:00:00Z", session="old")  # five events, one tombstone
        assert counts(client) == in_the_log(client) == (402, 3)

        client.call("admin.rebuild")
        assert counts(client) == in_the_log(client) == (402, 3)
