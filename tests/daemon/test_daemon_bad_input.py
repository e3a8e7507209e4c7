"""Bad input costs the request that carried it, never the connection, the daemon or the log.

Every case goes over a raw socket: one bad line must get exactly one JSON error line (code,
message, hint), nothing may be stored, and the next request on the SAME connection, and any other
client, must be answered as usual.
"""

from __future__ import annotations

import json
import random
import secrets
import socket
import time
from typing import Any, cast

import pytest
from daemon_support import RawConnection, Spawned, Spawner, wait_for, write_config

from daemon.paths import Paths
from store.errors import InvalidEvent, UsageError


def append_line(request_id: Any, args: dict[str, Any]) -> bytes:
    return json.dumps({"id": request_id, "op": "events.append", "args": args}).encode() + b"\n"


def good_event(n: int = 0, session: str = "s") -> dict[str, Any]:
    return {"session": session, "kind": "tool.call", "payload": {"n": n}}


# (the bad line, the id its error must carry, the error code, a fragment of the message)
BAD_LINES = [
    pytest.param(b"{not json at all\n", None, "bad_request", "not valid JSON", id="malformed-json"),
    pytest.param(b'{"id": 3, "op": "status"\n', None, "bad_request", "not valid JSON", id="truncated-object"),
    pytest.param(b"[1, 2, 3]\n", None, "bad_request", "JSON object", id="array-not-object"),
    pytest.param(b'"status"\n', None, "bad_request", "JSON object", id="string-not-object"),
    pytest.param(b"null\n", None, "bad_request", "JSON object", id="null-not-object"),
    pytest.param(b'{"id": 3, "args": {}}\n', 3, "bad_request", "'op'", id="missing-op"),
    pytest.param(b'{"id": 3, "op": 5}\n', 3, "bad_request", "'op'", id="op-not-string"),
    pytest.param(b'{"id": 3, "op": null}\n', 3, "bad_request", "'op'", id="op-null"),
    pytest.param(b'{"id": 3, "op": "status", "args": [1]}\n', 3, "bad_request", "'args'", id="args-array"),
    pytest.param(b'{"id": 3, "op": "status", "args": "x"}\n', 3, "bad_request", "'args'", id="args-string"),
    pytest.param(b'{"id": 3, "op": "events.explode"}\n', 3, "bad_request", "unknown operation", id="unknown-op"),
    pytest.param(
        b'{"id": 3, "op": "events.query", "args": {"limit": "x"}}\n',
        3,
        "bad_request",
        "'limit'",
        id="query-limit-string",
    ),
    pytest.param(
        b'{"id": 3, "op": "events.query", "args": {"after_seq": true}}\n',
        3,
        "bad_request",
        "'after_seq'",
        id="query-after-seq-bool",
    ),
    pytest.param(
        b'{"id": 3, "op": "events.get", "args": {"seq": 9223372036854775808}}\n',
        3,
        "bad_request",
        "'seq' must be a seq",
        id="get-seq-past-sqlite-integers",
    ),
    pytest.param(
        b'{"id": 3, "op": "events.query", "args": {"after_seq": -18446744073709551616}}\n',
        3,
        "bad_request",
        "'after_seq' must be a seq",
        id="query-after-seq-past-sqlite-integers",
    ),
    pytest.param(
        b'{"id": 3, "op": "events.query", "args": {"since": 1e308}}\n',
        3,
        "bad_request",
        "outside the years 1 to 9999",
        id="query-since-1e308-seconds",
    ),
    pytest.param(
        b'{"id": 3, "op": "events.query", "args": {"kinds": "tool.call"}}\n',
        3,
        "bad_request",
        "'kinds'",
        id="query-kinds-string",
    ),
    pytest.param(
        b'{"id": 3, "op": "events.get", "args": {"id": 5}}\n',
        3,
        "bad_request",
        "'id'",
        id="get-id-int",
    ),
    pytest.param(
        append_line("a", {"events": {"session": "s", "kind": "k"}}),
        "a",
        "bad_request",
        "events",
        id="append-events-not-list",
    ),
    pytest.param(append_line("a", {"events": []}), "a", "bad_request", "events", id="append-empty-batch"),
    pytest.param(
        append_line("a", {"event": {"session": "s", "kind": "k", "payload": [1, 2]}}),
        "a",
        "invalid_event",
        "payload",
        id="payload-array",
    ),
    pytest.param(
        append_line("a", {"event": {"session": "s", "kind": "k", "payload": "text"}}),
        "a",
        "invalid_event",
        "payload",
        id="payload-string",
    ),
    pytest.param(
        append_line("a", {"event": {"session": "s", "payload": {}}}),
        "a",
        "invalid_event",
        "kind",
        id="event-missing-kind",
    ),
    pytest.param(
        append_line("a", {"event": {"kind": "k", "payload": {}}}),
        "a",
        "invalid_event",
        "session",
        id="event-missing-session",
    ),
    pytest.param(
        append_line("a", {"event": {"session": "s", "kind": "not a kind!"}}),
        "a",
        "invalid_event",
        "kind",
        id="kind-not-dotted",
    ),
    pytest.param(append_line("a", {"event": "tool.call"}), "a", "invalid_event", "object", id="event-string"),
    pytest.param(
        append_line("a", {"events": [good_event(0), good_event(1), {"session": "s"}]}),
        "a",
        "invalid_event",
        "event 2",
        id="batch-with-one-bad-event",
    ),
    pytest.param(
        b'{"id": "a", "op": "events.append", "args": {"event": {"session": "s", "kind": "k",'
        b' "payload": {"x": NaN}}}}\n',
        "a",
        "invalid_event",
        "",
        id="payload-nan",
    ),
    pytest.param(
        b'{"id": "a", "op": "events.append", "args": {"event": {"session": "s", "kind": "k",'
        b' "payload": {"x": "\\ud800"}}}}\n',
        "a",
        "invalid_event",
        "",
        id="payload-lone-surrogate",
    ),
    pytest.param(b"[" * 200_000 + b"\n", None, "bad_request", "not valid JSON", id="nested-200k-deep"),
]


def assert_error_line(message: dict[str, Any], request_id: Any, code: str, fragment: str) -> None:
    assert message["id"] == request_id, message
    assert message["ok"] is False, message
    error = message["error"]
    assert set(error) == {"code", "message", "hint"}, error
    assert error["code"] == code, error
    assert isinstance(error["message"], str) and fragment in error["message"], error
    assert error["hint"] is None or (isinstance(error["hint"], str) and error["hint"]), error


def assert_nothing_stored(daemon: Spawned) -> None:
    status = daemon.status()
    assert (status["events"], status["sessions"]) == (0, 0), status


def counts(daemon: Spawned) -> tuple[int, int]:
    status = daemon.status()
    return status["events"], status["sessions"]


# The cases of a table share one daemon (``module_daemon``): each appends to a session of its own
# and compares the counts with those before it.
@pytest.mark.parametrize(("line", "request_id", "code", "fragment"), BAD_LINES)
def test_bad_line_gets_one_error_and_the_connection_keeps_serving(
    module_daemon: Spawned, line: bytes, request_id: Any, code: str, fragment: str
) -> None:
    daemon, session = module_daemon, "s-" + secrets.token_hex(4)
    events, sessions = counts(daemon)
    with RawConnection(daemon.paths) as conn:
        conn.send(line)
        assert_error_line(conn.read(), request_id, code, fragment)
        # Exactly one line came back: the next line on this connection answers the next request.
        answer = conn.call(99, "status")
        assert answer["id"] == 99 and answer["ok"] is True, answer
        assert (answer["result"]["events"], answer["result"]["sessions"]) == (events, sessions)
        # ... and the same connection still appends.
        stored = conn.call(100, "events.append", event=good_event(session=session))
        # (seq numbers the whole log: the bad line took none)
        assert stored["ok"] is True and stored["result"]["events"][0]["seq"] == events + 1, stored
    # another client sees the one good event, and only it
    assert counts(daemon) == (events + 1, sessions + 1)
    assert daemon.process.poll() is None


def test_unknown_op_hint_lists_the_known_operations(daemon: Spawned) -> None:
    with RawConnection(daemon.paths) as conn:
        error = conn.call(1, "events.explode")["error"]
    assert "events.append" in error["hint"] and "status" in error["hint"], error


def test_all_bad_lines_pipelined_on_one_connection(daemon: Spawned) -> None:
    """Many bad requests in one write: one error each, in order, then the good one is answered."""
    cases = [cast(tuple[bytes, Any, str, str], param.values) for param in BAD_LINES]
    with RawConnection(daemon.paths) as conn:
        conn.send(b"".join(line for line, *_ in cases) + b'{"id": "last", "op": "status"}\n')
        for _, request_id, code, fragment in cases:
            assert_error_line(conn.read(), request_id, code, fragment)
        last = conn.read()
    assert last["id"] == "last" and last["ok"] is True
    assert (last["result"]["events"], last["result"]["sessions"]) == (0, 0)


def test_other_clients_are_served_while_one_sends_garbage(daemon: Spawned) -> None:
    with RawConnection(daemon.paths) as bad, RawConnection(daemon.paths) as good:
        bad.send(b"{{{\n")
        assert good.call(1, "events.append", event=good_event())["ok"] is True
        assert bad.read()["ok"] is False
        assert good.call(2, "status")["result"]["events"] == 1


def test_half_line_then_hang_up_stores_nothing(daemon: Spawned) -> None:
    whole = append_line(1, {"event": good_event()})
    with RawConnection(daemon.paths) as conn:
        conn.send(whole[: len(whole) // 2])
    with RawConnection(daemon.paths) as conn:
        conn.send(whole[:-1])  # everything but the newline: still not a request
    with daemon.client() as client:
        wait_for(lambda: client.call("status")["clients"] == 1, "the hung-up clients are gone")
        status = client.call("status")
    assert (status["events"], status["sessions"]) == (0, 0)


def test_connect_and_hang_up_many_times(daemon: Spawned) -> None:
    for _ in range(50):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(str(daemon.paths.socket))
        sock.close()
    with daemon.client() as client:
        wait_for(lambda: client.call("status")["clients"] == 1, "the hung-up clients are gone")
        assert client.record("s", "note", {})["seq"] == 1


def test_binary_garbage_then_a_request_on_the_same_connection(daemon: Spawned) -> None:
    garbage = random.Random(7).randbytes(256 * 1024)
    with RawConnection(daemon.paths) as conn:
        conn.send(garbage + b'\n{"id": "after", "op": "status"}\n')
        errors = 0
        while True:
            message = conn.read()
            if message["id"] == "after":
                break
            assert message["ok"] is False and message["error"]["code"] == "bad_request", message
            errors += 1
    assert errors >= 1
    assert message["ok"] is True
    assert (message["result"]["events"], message["result"]["sessions"]) == (0, 0)


def test_binary_garbage_then_hang_up(daemon: Spawned) -> None:
    with RawConnection(daemon.paths) as conn:
        conn.send(b"\x00\xff\xfe\x00" * 4096)  # no newline at all
    with RawConnection(daemon.paths) as conn:
        conn.send(b"\xff\xfe\x00\x01\n")  # a whole line, left unread
    assert_nothing_stored(daemon)
    assert daemon.process.poll() is None


LIMIT = 4096


def start_with_small_line_limit(paths: Paths, spawn: Spawner, source: str) -> Spawned:
    if source == "config.toml":
        write_config(paths, f"[daemon]\nmax_line_bytes = {LIMIT}\n")
        return spawn()
    return spawn(env={"TOKA_MAX_LINE_BYTES": str(LIMIT)})


@pytest.mark.parametrize("source", ["config.toml", "env"])
def test_oversize_line_is_refused_and_the_connection_keeps_serving(paths: Paths, spawn: Spawner, source: str) -> None:
    daemon = start_with_small_line_limit(paths, spawn, source)
    oversize = append_line(1, {"event": {"session": "s", "kind": "k", "payload": {"text": "x" * 3 * LIMIT}}})
    with RawConnection(paths) as conn:
        conn.send(oversize)
        error = conn.read()
        assert_error_line(error, None, "bad_request", f"exceeds {LIMIT} bytes")
        assert "max_line_bytes" in error["error"]["hint"]
        answer = conn.call(2, "status")
        assert answer["id"] == 2 and answer["result"]["events"] == 0
        # A line under the limit is still taken on the same connection.
        fits = conn.call(3, "events.append", event={"session": "s", "kind": "k", "payload": {"text": "y" * 1000}})
        assert fits["ok"] is True, fits
    assert daemon.status()["events"] == 1


def test_oversize_line_sent_slowly_in_pieces(paths: Paths, spawn: Spawner) -> None:
    """The daemon discards the excess as it comes, then answers once the line ends."""
    daemon = start_with_small_line_limit(paths, spawn, "env")
    with RawConnection(paths) as conn:
        conn.send(
            b'{"id": 1, "op": "events.append", "args": {"event": {"session": "s", "kind": "k", "payload": {"t": "'
        )
        for _ in range(6):
            conn.send(b"z" * LIMIT)
            time.sleep(0.02)
        conn.send(b'"}}}}\n{"id": 2, "op": "status"}\n')
        assert_error_line(conn.read(), None, "bad_request", "exceeds")
        answer = conn.read()
    assert answer["id"] == 2 and answer["result"]["events"] == 0
    assert daemon.status()["events"] == 0


def test_oversize_batch_raises_usage_error_in_the_client(paths: Paths, spawn: Spawner) -> None:
    daemon = start_with_small_line_limit(paths, spawn, "env")
    with daemon.client() as client:
        with pytest.raises(UsageError, match="exceeds"):
            client.append([good_event(n) for n in range(500)])
        assert client.record("s", "k", {})["seq"] == 1  # the same client carries on


@pytest.mark.parametrize("ts", [1e20, -1e20, "10000-01-01T00:00:00Z", float("inf")], ids=str)
def test_out_of_range_timestamps_are_invalid_events(module_daemon: Spawned, ts: Any) -> None:
    events, _ = counts(module_daemon)
    with module_daemon.client() as client:
        with pytest.raises(InvalidEvent, match="ts"):
            client.record("s-" + secrets.token_hex(4), "message", {}, ts=ts)
        assert client.call("status")["events"] == events


def test_a_line_of_whitespace_is_skipped_unanswered(daemon: Spawned) -> None:
    with RawConnection(daemon.paths) as conn:
        conn.send(b" \t \r\n\n")
        conn.send_request(7, "hello")
        answer = conn.read()
    assert answer["id"] == 7 and answer["ok"] is True
