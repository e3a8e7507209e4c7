"""What makes a hook event land once: each invocation is an event of its own, even when its payload
repeats an earlier one word for word (Claude Code fires Stop with the same payload turn after
turn), while one invocation delivered twice (its answer timed out and it spooled, a spool
ingested again after a crash) lands once."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from daemons import PATIENCE, Spawned, spawn_daemon
from hook_support import TOKA, fixture_files, payloads

from daemon.client.sync import Client
from daemon.paths import resolve_paths
from toka_cli.hook import ANSWER_TIMEOUT_S, event_kind, record_hook


def _record(raw: bytes) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert record_hook("claude-code", raw, out, err) == 0
    assert (out.getvalue(), err.getvalue()) == ("", "")


def _stops() -> list[dict[str, object]]:
    """The Stop payloads of one fixture session: 13 invocations, 4 different payloads."""
    [path] = [p for p in fixture_files() if p.name.endswith("__stop.json") and p.name.startswith("kesslerio")]
    return payloads(path)


def test_each_invocation_of_a_repeated_payload_is_an_event(daemon: Spawned) -> None:
    stops = _stops()
    assert len({json.dumps(p) for p in stops}) < len(stops)  # the fixture repeats payloads word for word
    for payload in stops:
        _record(json.dumps(payload).encode())
    with Client(autostart=False) as client:
        recorded = list(client.iter_events(kinds=["hook.stop"]))
    assert Counter(e["session"] for e in recorded) == Counter(p["session_id"] for p in stops)
    assert len({e["key"] for e in recorded}) == len(stops)


def test_a_tool_use_is_one_event_of_each_kind_however_often_its_hook_runs(daemon: Spawned) -> None:
    pre = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_1"}
    post = {**pre, "hook_event_name": "PostToolUse", "tool_response": {"stdout": "ok"}}
    other = {**pre, "tool_use_id": "toolu_2"}
    for payload in (pre, pre, post, post, other):  # a hook installed twice runs twice per call
        _record(json.dumps(payload).encode())
    with Client(autostart=False) as client:
        recorded = [(e["kind"], e["key"]) for e in client.iter_events(session="s")]
    assert recorded == [
        ("hook.pre_tool_use", "hook.pre_tool_use:toolu_1"),
        ("hook.post_tool_use", "hook.post_tool_use:toolu_1"),
        ("hook.pre_tool_use", "hook.pre_tool_use:toolu_2"),
    ]


@pytest.mark.slow
def test_every_fixture_payload_is_an_event_per_invocation(daemon: Spawned) -> None:
    expected: Counter[tuple[str, str]] = Counter()
    tool_uses: set[tuple[str, str]] = set()
    for path in fixture_files():
        for payload in payloads(path):
            _record(json.dumps(payload).encode())
            kind = event_kind(payload["hook_event_name"])
            use = payload.get("tool_use_id")
            if use is None or (kind, use) not in tool_uses:
                expected[(payload["session_id"], kind)] += 1
            if use is not None:
                tool_uses.add((kind, use))
    with Client(autostart=False) as client:
        # What toka appends of its own beside them (the handoff a PreCompact builds) is not counted.
        recorded = Counter((e["session"], e["kind"]) for e in client.iter_events() if e["kind"].startswith("hook."))
    assert recorded == expected
    assert sum(expected.values()) == sum(len(payloads(p)) for p in fixture_files())  # none collapsed


@pytest.mark.slow
def test_an_invocation_whose_answer_timed_out_lands_once(daemon: Spawned, tmp_path: Path) -> None:
    """The hook gives up waiting, spools its event, and the daemon commits the first delivery
    after all: the spooled copy, ingested later, changes nothing."""
    paths = resolve_paths()
    payload = {"session_id": "slow", "hook_event_name": "Stop", "stop_hook_active": False}
    os.kill(daemon.process.pid, signal.SIGSTOP)  # the kernel still queues the hook's connection
    try:
        hook = subprocess.run(
            [str(TOKA), "hook", "claude-code"],
            input=json.dumps(payload).encode(),
            capture_output=True,
            timeout=ANSWER_TIMEOUT_S + PATIENCE,
        )
        # Read while the daemon is still stopped: once it runs, it drains the spool itself.
        [spooled] = [json.loads(line) for line in paths.spool.read_bytes().splitlines()]
    finally:
        os.kill(daemon.process.pid, signal.SIGCONT)
    assert hook.returncode == 0 and b"spooled: the daemon did not answer in time" in hook.stderr
    daemon.stop()
    restarted = spawn_daemon(paths, tmp_path / "again.log")  # ingests the spool
    try:
        with restarted.client() as client:
            recorded = list(client.iter_events(session="slow"))
    finally:
        restarted.stop()
    assert [e["key"] for e in recorded] == [spooled["key"]]
    assert not paths.spool.exists()
