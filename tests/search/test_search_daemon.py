"""A long search in a real daemon: the daemon's other reads answer while it runs, and a SIGTERM
stops the daemon within its shutdown deadline instead of after the search.

The searches are long because the log is large for what they ask (600 events of 6,400 words, each
holding all 64 words of the query), not because of how the query is written: they take seconds
however they are read. Several are sent at once, so that when the first answers the others are
still to run.
"""

from __future__ import annotations

import json
import select
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from daemons import PATIENCE, Spawned, Spawner

from daemon.paths import Paths, resolve_paths
from store.search import MAX_QUERY_WORDS

WORDS = [f"w{index:02d}" for index in range(MAX_QUERY_WORDS)]
TEXT = " ".join(WORDS[index % len(WORDS)] for index in range(6400))
SEARCHES = 8


def large_log(daemon: Spawned) -> None:
    with daemon.client() as client:
        for _ in range(6):
            client.append([{"session": "large", "kind": "message", "payload": {"text": TEXT}} for _ in range(100)])


def connect(paths: Paths) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(PATIENCE)
    sock.connect(str(paths.socket))
    return sock


def call(paths: Paths, op: str, **args: Any) -> dict[str, Any]:
    with connect(paths) as sock, sock.makefile("rb") as answers:
        sock.sendall(json.dumps({"id": 1, "op": op, "args": args}).encode() + b"\n")
        answer: dict[str, Any] = json.loads(answers.readline())
        return answer


@pytest.fixture
def daemon(spawn: Spawner) -> Spawned:
    """A daemon that waits half a second for the requests in flight when it stops."""
    resolve_paths().config_file.write_text("[daemon]\nshutdown_deadline = 0.5\n", encoding="utf-8")
    return spawn()


def search_request(limit: int) -> bytes:
    return json.dumps({"id": 1, "op": "search", "args": {"query": " ".join(WORDS), "limit": limit}}).encode() + b"\n"


@contextmanager
def searching(daemon: Spawned, limit: int) -> Iterator[list[socket.socket]]:
    """Connections that each sent a long search for ``limit`` hits, once the search sent before
    them (20 hits) is answered: searches run one after the other, so the next one is running."""
    large_log(daemon)
    first = connect(daemon.paths)
    first.sendall(search_request(20))
    connections = [connect(daemon.paths) for _ in range(SEARCHES)]
    for sock in connections:
        sock.sendall(search_request(limit))
    try:
        readable, _, _ = select.select([first], [], [], PATIENCE * 4)
        assert readable, "the first search was not answered"
        yield connections
    finally:
        for sock in [first, *connections]:
            sock.close()


def unanswered(connections: list[socket.socket]) -> list[socket.socket]:
    readable, _, _ = select.select(connections, [], [], 0)
    return [sock for sock in connections if sock not in readable]


def test_status_and_reads_answer_on_other_connections_while_searches_run(daemon: Spawned) -> None:
    with searching(daemon, 20) as pending:
        status = call(daemon.paths, "status")
        events = call(daemon.paths, "events.query", session="large", limit=1)
        assert status["ok"] and status["result"]["events"] == 600
        assert events["ok"] and len(events["result"]["events"]) == 1
        assert unanswered(pending), "the reads were answered only once every search was"


def test_sigterm_during_a_search_stops_the_daemon_within_its_deadline(daemon: Spawned) -> None:
    with searching(daemon, 200):  # 200 hits, each a text of 6,400 matched words: tens of seconds
        assert daemon.stop() == 0  # within PATIENCE, where the search would take longer
    assert "requests did not finish within the deadline" in daemon.log()
