"""The daemon follows the agents' own folders by itself (watch.agents): its first start in a new
home imports the history they hold, a later start reads only what is new, each event is stored
once however it came in, and nothing is read while the setting is off."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from agent_homes import EXAMPLE, SMALL_CLAUDE, SMALL_CODEX, AgentsHome, fill_from_fixtures, fill_with_example
from daemon_support import Spawned, Spawner, wait_for

from daemon.ingest.formats import PARSERS, detect
from daemon.ingest.lines import ParseStats
from daemon.paths import resolve_paths

TOKA = Path(sys.executable).parent / "toka"


def _ready(daemon: Spawned) -> dict[str, Any]:
    """The read at start, once done: watch.ready answers when it is."""
    with daemon.client() as client:
        read: dict[str, Any] = client.call("watch.ready")
        return read


def _keys_of(files: list[Path]) -> set[tuple[str, str]]:
    """The (session, key) of every event the importers make of the files, read directly."""
    keys = set()
    for path in files:
        fmt = detect(path)
        assert fmt is not None, path
        keys |= {(event["session"], event["key"]) for event in PARSERS[fmt](path, ParseStats())}
    return keys


def _log_keys(daemon: Spawned) -> set[tuple[str, str]]:
    with daemon.client() as client:
        return {(e["session"], e["key"]) for e in client.iter_events() if e["kind"] != "lifecycle" and e["key"]}


def test_the_first_start_imports_both_agents_folders(agents_home: AgentsHome, spawn: Spawner) -> None:
    fill_from_fixtures(agents_home, SMALL_CLAUDE, SMALL_CODEX)
    claude, codex = agents_home.files(agents_home.claude), agents_home.files(agents_home.codex)
    daemon = spawn()
    read = _ready(daemon)
    assert read["state"] == "done" and read["first"] is True
    assert read["files"] == read["files_read"] == len(claude) + len(codex) == 8
    assert read["imported_at"] is not None
    expected = _keys_of(claude + codex)
    assert _log_keys(daemon) >= expected
    assert read["events"] == len(expected)
    watch = daemon.status()["watch"]
    assert watch["paths"] == [] and watch["history"] == read
    assert watch["agents"] == [
        {"agent": "claude-code", "path": str(agents_home.home / ".config/claude/projects"), "found": False, "files": 0},
        {"agent": "claude-code", "path": str(agents_home.claude), "found": True, "files": len(claude)},
        {"agent": "codex", "path": str(agents_home.codex), "found": True, "files": len(codex)},
    ]
    record = json.loads(resolve_paths().agents_imported.read_text())
    assert record == {
        "imported_at": read["imported_at"],
        "folders": [str(agents_home.claude), str(agents_home.codex)],
        "files": 8,
        "events": read["events"],
    }


def test_a_second_start_imports_nothing_again(agents_home: AgentsHome, spawn: Spawner) -> None:
    fill_with_example(agents_home)
    first = spawn()
    imported = _ready(first)
    assert imported["first"] is True and imported["events"] == 23
    events = first.status()["events"]
    first.stop()
    again = spawn()
    read = _ready(again)
    assert read == {
        "state": "done",
        "first": False,
        "files": 1,
        "files_read": 1,
        "events": 0,
        "imported_at": imported["imported_at"],
    }
    assert again.status()["events"] == events


def test_with_the_setting_off_nothing_is_imported(agents_home: AgentsHome, spawn: Spawner) -> None:
    fill_with_example(agents_home)
    daemon = spawn(env={"TOKA_WATCH_AGENTS": "false"})
    with daemon.client() as client:
        assert client.call("watch.ready") is None
    status = daemon.status()
    assert status["watch"] is None
    assert status["events"] == 0
    assert not resolve_paths().agents_imported.exists()


def test_history_imported_before_is_not_counted_twice(agents_home: AgentsHome, spawn: Spawner) -> None:
    """Events are keyed: a `toka import` of the same files first leaves the daemon nothing to add."""
    fill_from_fixtures(agents_home, SMALL_CLAUDE, SMALL_CODEX)
    imported = subprocess.run(
        [str(TOKA), "import", str(agents_home.claude), str(agents_home.codex), "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "TOKA_WATCH_AGENTS": "false"},
        timeout=60,
    )
    assert imported.returncode == 0, imported.stderr
    assert json.loads(imported.stdout)["created"] > 0
    subprocess.run([str(TOKA), "daemon", "stop"], capture_output=True, timeout=30, check=True)
    daemon = spawn()
    events = daemon.status()["events"]
    read = _ready(daemon)
    assert read["files_read"] == 8 and read["events"] == 0
    assert daemon.status()["events"] == events


def test_a_folder_made_after_the_start_is_followed_once_it_appears(agents_home: AgentsHome, spawn: Spawner) -> None:
    """An agent run for the first time after the daemon started makes its folder then: the daemon
    finds it at a rescan, reads what it holds and records the history imported."""
    shutil.rmtree(agents_home.home / ".claude")
    shutil.rmtree(agents_home.home / ".codex")
    daemon = spawn()
    assert _ready(daemon)["imported_at"] is None
    rollouts = agents_home.codex / "2026" / "03" / "14"
    rollouts.mkdir(parents=True)
    shutil.copy2(EXAMPLE, rollouts / "rollout.jsonl")

    def codex_folder() -> dict[str, Any] | None:
        folder: dict[str, Any] = daemon.status()["watch"]["agents"][-1]
        return folder if folder["files"] == 1 else None

    codex = wait_for(codex_folder, "the new folder is followed and its file read")
    assert codex == {"agent": "codex", "path": str(agents_home.codex), "found": True, "files": 1}
    status = daemon.status()
    assert status["watch"]["events"] == 23
    assert status["watch"]["history"]["imported_at"] is not None
    assert json.loads(resolve_paths().agents_imported.read_text())["folders"] == [str(agents_home.codex)]
