"""Fuzzing the protocol with hypothesis: arbitrary bytes, deep and huge JSON, wrong types in every
field of every operation, unicode edge cases, half lines and clients that vanish mid-request.
The daemon answers each line with one answer (a result or a clean error, never an internal
one), keeps serving, and leaks no file descriptors."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

from daemon_support import Spawned
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from daemon.ops import OPS

EXAMPLES = int(os.environ.get("TOKA_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# Operations that stream, stop the daemon or wait on purpose are fuzzed apart (or not at all).
SKIPPED = {"shutdown", "events.subscribe", "events.stream"}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
# Argument names the operations read, so that fuzzed values land in real fields.
FIELDS = [
    "session", "events", "event", "id", "seq", "kinds", "since", "until", "after_seq", "before_seq", "limit",
    "order", "agent", "target", "type", "window", "policy", "reason", "input_tokens", "output_tokens", "scope",
    "key", "value", "value_b64", "ttl", "expect_version", "pinned", "budget", "dry_run", "force", "query",
    "digest", "machine", "entity", "to", "node", "needs", "trace", "progress", "prefix",
]  # fmt: skip


class Connection:
    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(str(path))
        self.reader = self.sock.makefile("rb")

    def ask(self, line: bytes) -> dict[str, Any]:
        self.sock.sendall(line + b"\n")
        answer = self.reader.readline()
        assert answer, "the daemon closed the connection"
        message: dict[str, Any] = json.loads(answer)
        return message

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


def _fds(daemon: Spawned) -> int:
    return len(os.listdir(f"/proc/{daemon.process.pid}/fd"))


def _alive(daemon: Spawned) -> None:
    assert daemon.process.poll() is None
    assert daemon.status()["version"]


def _clean(answer: dict[str, Any]) -> None:
    """One answer, ok or an error the daemon meant to give."""
    assert "ok" in answer, answer
    if answer["ok"] is False:
        error = answer["error"]
        assert error["code"] != "error" or "internal error" not in error["message"], error
        assert isinstance(error["message"], str) and error["message"]


@FUZZ
@given(line=st.binary(max_size=300).filter(lambda b: b"\n" not in b and b.strip()))
def test_arbitrary_bytes_get_one_answer_each(daemon: Spawned, line: bytes) -> None:
    connection = Connection(daemon.paths.socket)
    try:
        _clean(connection.ask(line))
    finally:
        connection.close()


@FUZZ
@given(
    op=st.sampled_from(sorted(set(OPS) - SKIPPED)),
    args=st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=5),
)
def test_wrong_types_in_every_field_are_clean_errors(daemon: Spawned, op: str, args: dict[str, Any]) -> None:
    connection = Connection(daemon.paths.socket)
    try:
        line = json.dumps({"id": 1, "op": op, "args": args}, ensure_ascii=False).encode("utf-8", "surrogatepass")
        _clean(connection.ask(line))
    finally:
        connection.close()


@FUZZ
@given(text=st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_unicode_edge_cases_round_trip_through_an_event(daemon: Spawned, text: str) -> None:
    connection = Connection(daemon.paths.socket)
    try:
        event = {"session": "fuzz-unicode", "kind": "message", "payload": {"text": text}}
        answer = connection.ask(json.dumps({"id": 1, "op": "events.append", "events": [event]}).encode())
        _clean(answer)
        if answer["ok"]:
            seq = answer["result"]["events"][0]["seq"]
            stored = connection.ask(json.dumps({"id": 2, "op": "events.get", "args": {"seq": seq}}).encode())
            assert stored["result"]["payload"] == {"text": text}
    finally:
        connection.close()


def test_deep_and_huge_json_cost_one_request(daemon: Spawned) -> None:
    connection = Connection(daemon.paths.socket)
    try:
        _clean(connection.ask(b"[" * 200_000 + b"]" * 200_000))
        _clean(connection.ask(json.dumps({"id": 1, "op": "status", "args": {"x": "y" * 3_000_000}}).encode()))
        _clean(connection.ask(b'{"id": 2, "op": "status", "args": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5001))
        assert connection.ask(b'{"id": 3, "op": "hello"}')["ok"] is True  # the same connection goes on
    finally:
        connection.close()
    _alive(daemon)


def test_half_lines_and_vanishing_clients_leak_nothing(daemon: Spawned) -> None:
    _alive(daemon)
    before = _fds(daemon)
    for i in range(200):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(str(daemon.paths.socket))
        if i % 3 == 0:
            sock.sendall(b'{"id": 1, "op": "sta')  # half a request, then gone
        elif i % 3 == 1:
            sock.sendall(b'{"id": 1, "op": "events.query", "args": {"limit": 5000}}\n')  # gone before the answer
        sock.close()
    _alive(daemon)
    assert _fds(daemon) <= before + 2  # what the answers in flight still hold, at most
