"""`toka state ...` and `toka deps ...` against a real daemon: changes stored as events, refusals
that store nothing, config machines, and the tables rebuilt when the daemon restarts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from daemons import Spawned, Spawner
from typer.testing import CliRunner, Result

from daemon.client.sync import Client
from daemon.paths import resolve_paths
from store.errors import Conflict
from toka_cli.main import app

DEPLOY = """
[state.machines.deploy]
states = ["queued", "building", "live", "rolled_back"]
initial = "queued"
transitions = { queued = ["building"], building = ["live", "rolled_back"], live = ["rolled_back"] }
progress = { queued = 0, building = 40, live = 100 }
"""


def _run(*args: str, exit_code: int = 0) -> Result:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == exit_code, (result.stdout, result.stderr)
    return result


def _json(*args: str) -> Any:
    return json.loads(_run(*args, "--json").stdout)


def _stored(session: str) -> list[dict[str, Any]]:
    with Client(autostart=False) as client:
        return list(client.iter_events(session=session))


def _error(result: Result) -> str:
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: ") and "Traceback" not in result.stderr, result.stderr
    return result.stderr


def test_set_get_and_history_of_an_agent(daemon: Spawned) -> None:
    assert _json("state", "get", "agent", "worker-1") == {
        "machine": "agent",
        "entity": "worker-1",
        "state": "INITIALIZING",
        "progress": None,
        "since": None,
        "history_len": 0,
    }
    changed = _json("state", "set", "agent", "worker-1", "READY", "--reason", "tools loaded")
    assert (changed["from"], changed["state"], changed["changed"], changed["history_len"]) == (
        "INITIALIZING",
        "READY",
        True,
        1,
    )
    _run("state", "set", "agent", "worker-1", "executing_task")  # case-insensitive when unique
    again = _json("state", "set", "agent", "worker-1", "EXECUTING_TASK")
    assert again["changed"] is False
    history = _json("state", "history", "agent", "worker-1")
    assert [(c["from"], c["to"], c["reason"]) for c in history["changes"]] == [
        ("INITIALIZING", "READY", "tools loaded"),
        ("READY", "EXECUTING_TASK", None),
    ]
    events = _stored("toka.state")
    assert [e["kind"] for e in events] == ["state.set", "state.set"]
    assert events[0]["payload"] == {
        "machine": "agent",
        "entity": "worker-1",
        "from": "INITIALIZING",
        "to": "READY",
        "reason": "tools loaded",
        "progress": None,
    }
    assert "EXECUTING_TASK" in _run("state", "get", "agent", "worker-1").stdout


def test_refusals_name_what_is_allowed_and_store_nothing(daemon: Spawned) -> None:
    refused = _run("state", "set", "agent", "w", "COMPLETED", exit_code=6)
    assert "agent w is INITIALIZING and cannot go to COMPLETED" in _error(refused)
    assert "hint: from INITIALIZING: READY, FAILED, TERMINATED" in refused.stderr
    assert "no state machine 'nosuch'" in _error(_run("state", "set", "nosuch", "w", "X", exit_code=3))
    assert "has no state 'DANCING'" in _error(_run("state", "set", "agent", "w", "DANCING", exit_code=2))
    _run("state", "set", "session", "", "failed", exit_code=2)
    _run("state", "set", "session", "run", "completed", exit_code=6)
    with Client(autostart=False) as client:
        assert [s["session"] for s in client.call("sessions.list")["sessions"]] == []


def test_session_phases_carry_progress_and_fail_from_any_phase(daemon: Spawned) -> None:
    for phase in ("critical_infrastructure", "foundation_services", "parallel_development"):
        _run("state", "set", "session", "release-9", phase)
    assert _json("state", "get", "session", "release-9")["progress"] == 50
    failed = _json("state", "set", "session", "release-9", "failed", "--reason", "tests red")
    assert (failed["state"], failed["progress"]) == ("failed", 50)
    refused = _run("state", "set", "session", "release-9", "monitoring", exit_code=6)
    assert "failed is final" in refused.stderr
    listed = _json("state", "list", "session")["entities"]
    assert [(e["entity"], e["state"]) for e in listed] == [("release-9", "failed")]


def test_machines_from_config_and_registered_ones(spawn: Spawner, tmp_path: Any) -> None:
    config = resolve_paths().config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(DEPLOY, encoding="utf-8")
    spawn()
    machines = {m["name"]: m for m in _json("state", "machines")["machines"]}
    assert {n: m["source"] for n, m in machines.items()} == {
        "agent": "builtin",
        "deploy": "config",
        "session": "builtin",
    }
    assert machines["deploy"]["final"] == ["rolled_back"]
    assert _json("state", "set", "deploy", "web", "building")["progress"] == 40

    extra = tmp_path / "review.toml"
    extra.write_text(
        '[state.machines.review]\nstates = ["draft", "merged"]\ninitial = "draft"\n'
        'transitions = { draft = ["merged"] }\n'
    )
    assert _json("state", "register", str(extra))["machines"][0]["changed"] is True
    assert "review: unchanged" in _run("state", "register", str(extra)).stdout
    _run("state", "set", "review", "pr-1", "merged")
    shrunk = tmp_path / "shrunk.toml"
    shrunk.write_text('[state.machines.review]\nstates = ["draft"]\ninitial = "draft"\n')
    assert "entities are in merged" in _error(_run("state", "register", str(shrunk), exit_code=6))
    with Client(autostart=False) as client, pytest.raises(Conflict, match="built in"):
        client.call("state.register", name="agent", states=["A"], initial="A")
    assert [e["kind"] for e in _stored("toka.state")] == ["state.set", "state.machine", "state.set"]


def test_states_and_deps_survive_a_restart(spawn: Spawner) -> None:
    first = spawn()
    _run("state", "set", "agent", "w", "READY")
    _run("deps", "add", "api", "--needs", "db")
    before = (_json("state", "history", "agent", "w"), _json("deps", "order"))
    first.stop()
    spawn()
    assert (_json("state", "history", "agent", "w"), _json("deps", "order")) == before


def test_deps_add_order_show_and_remove(daemon: Spawned) -> None:
    added = _json("deps", "add", "frontend", "--needs", "api", "--needs", "auth")
    assert added["added"] == ["api", "auth"]
    _run("deps", "add", "api", "--needs", "db")
    _run("deps", "add", "auth", "--needs", "db")
    assert _json("deps", "add", "api", "--needs", "db")["added"] == []
    assert _json("deps", "order") == {"waves": [["db"], ["api", "auth"], ["frontend"]], "nodes": 4}
    assert _run("deps", "order").stdout.splitlines() == ["wave 0: db", "wave 1: api auth", "wave 2: frontend"]
    assert _json("deps", "show")["edges"] == [
        {"node": "api", "needs": "db"},
        {"node": "auth", "needs": "db"},
        {"node": "frontend", "needs": "api"},
        {"node": "frontend", "needs": "auth"},
    ]
    removed = _json("deps", "rm", "frontend", "--needs", "auth")
    assert removed["removed"] == ["auth"] and len(removed["edges"]) == 3
    assert [e["kind"] for e in _stored("toka.deps")] == ["deps.add"] * 4 + ["deps.remove"]


def test_deps_refusals_store_nothing(daemon: Spawned) -> None:
    _run("deps", "add", "b", "--needs", "c")
    _run("deps", "add", "c", "--needs", "a")
    cycle = _run("deps", "add", "a", "--needs", "x", "--needs", "b", exit_code=6)
    assert "adding a needs b would close the cycle a -> b -> c -> a" in _error(cycle)
    assert "cannot need itself" in _error(_run("deps", "add", "a", "--needs", "a", exit_code=2))
    _run("deps", "add", "", "--needs", "a", exit_code=2)
    assert "a does not need b" in _error(_run("deps", "rm", "a", "--needs", "b", exit_code=3))
    assert len(_stored("toka.deps")) == 2  # the x edge of the refused request was not stored either


def test_a_malformed_config_machine_stops_the_daemon_with_a_config_error() -> None:
    config = resolve_paths().config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(DEPLOY.replace('initial = "queued"', 'initial = "nowhere"'), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "daemon"], capture_output=True, text=True, timeout=30, env=dict(os.environ)
    )
    assert run.returncode == 2, run.stderr
    assert "machine deploy: initial state 'nowhere' is not one of its states" in run.stderr
