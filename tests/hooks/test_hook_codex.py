"""`toka hook codex PAYLOAD`: Codex's notify program, its payload as the last argument, recorded in
the session of its thread (the rollout's session id), once per turn."""

from __future__ import annotations

import json
import os
import subprocess

from hook_support import TOKA

from daemon.client.sync import Client
from daemon.paths import resolve_paths

THREAD = "019a7c2e-7d5b-7c30-9a41-3f2a1c0d9e11"
TURN = {
    "type": "agent-turn-complete",
    "thread-id": THREAD,
    "turn-id": "12",
    "cwd": "/home/me/src",
    "input-messages": ["rename the flag"],
    "last-assistant-message": "Renamed it in three files.",
}


def notify(payload: dict[str, object] | str) -> subprocess.CompletedProcess[bytes]:
    """Run as Codex runs its notify program: the JSON as the last argument, stdin closed."""
    argument = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [str(TOKA), "hook", "codex", argument],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=os.environ,
        timeout=30,
    )


def events_of(session: str) -> list[dict[str, object]]:
    with Client(autostart=False) as client:
        return list(client.iter_events(session=session))


def test_a_turn_lands_in_its_thread_once(daemon: object) -> None:
    for _ in range(2):  # Codex retrying, or the same turn notified twice
        result = notify(TURN)
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    [event] = events_of(THREAD)
    assert event["kind"] == "hook.agent_turn_complete" and event["agent"] == "main"
    assert event["payload"] == TURN
    assert event["key"] == "hook.agent_turn_complete:12"


def test_each_turn_is_its_own_event(daemon: object) -> None:
    notify(TURN)
    notify(TURN | {"turn-id": "13", "last-assistant-message": "Done."})
    assert [e["payload"]["turn-id"] for e in events_of(THREAD)] == ["12", "13"]  # type: ignore[index]


def test_a_payload_that_is_not_json_is_reported_and_nothing_breaks(daemon: object) -> None:
    result = notify("{not json")
    assert result.returncode == 0 and result.stdout == b""
    assert result.stderr.startswith(b"toka hook: nothing recorded: the argument is not JSON")
    assert not resolve_paths().spool.exists()


def test_a_payload_without_a_thread_is_reported(daemon: object) -> None:
    result = notify({"type": "agent-turn-complete"})
    assert result.returncode == 0
    assert result.stderr == b"toka hook: nothing recorded: the payload has no thread-id\n"


def test_without_a_daemon_the_turn_waits_in_the_spool(toka_home: object) -> None:
    result = notify(TURN)
    assert result.returncode == 0 and result.stdout == b""
    [line] = resolve_paths().spool.read_bytes().splitlines()
    assert json.loads(line)["session"] == THREAD
