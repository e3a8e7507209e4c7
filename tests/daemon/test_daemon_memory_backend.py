"""``python -m daemon --memory``: the same protocol over the in-memory store, nothing kept."""

from __future__ import annotations

from daemon_support import RawConnection, Spawner

from daemon.paths import Paths


def test_memory_daemon_appends_and_queries(paths: Paths, spawn: Spawner) -> None:
    daemon = spawn("--memory")
    with daemon.client() as client:
        status = client.call("status")
        assert status["database"] == ":memory:"
        first = client.record("s", "message", {"text": "hello"})
        rest = client.append([{"kind": "tool.call", "payload": {"n": n}} for n in range(10)], session="s")
        client.record("t", "note", {})
        events = client.call("events.query", session="s")["events"]
        assert [e["id"] for e in events] == [first["id"]] + [e["id"] for e in rest]
        assert events[1]["parents"] == [first["id"]]
        assert client.call("events.query", kinds=["note"])["events"][0]["session"] == "t"
        assert client.call("events.get", id=first["id"])["payload"] == {"text": "hello"}
        assert client.call("verify")["ok"] is True
        assert client.call("status")["events"] == 12
    with RawConnection(paths) as conn:  # bad input is handled the same way
        assert conn.call(1, "events.query", limit="x")["error"]["code"] == "bad_request"
    assert daemon.stop() == 0
    assert not paths.database.exists()

    again = spawn("--memory")
    assert again.status()["events"] == 0  # memory means nothing survives a restart
