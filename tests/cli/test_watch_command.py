"""`toka watch` in the foreground, and the `[watch] paths` setting."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
import watch_support
from cli_support import assert_error, invoke
from watch_support import Watching

from daemon.paths import resolve_paths


def _transcript(tmp_path: Path) -> Path:
    folder = tmp_path / "projects"
    folder.mkdir(exist_ok=True)
    return folder / f"{watch_support.SESSION}.jsonl"


@pytest.mark.slow
def test_each_new_event_is_printed_as_json_once_as_lines_are_written(tmp_path: Path) -> None:
    target = _transcript(tmp_path)
    lines = watch_support.lines()
    watch_support.append(target, lines[0])
    watching = Watching(str(target.parent), "--json")
    try:
        first = [json.loads(line) for line in watching.next_lines(2)]
        assert [e["kind"] for e in first] == ["session.meta", "message"]
        watch_support.append(target, lines[1][:25])  # half a line: nothing yet
        watch_support.append(target, lines[1][25:])
        second = [json.loads(line) for line in watching.next_lines(2)]
    finally:
        code, stderr = watching.stop()
    assert [e["kind"] for e in second] == ["message", "usage"]
    event = second[0]
    assert set(event) == {"path", "seq", "id", "created", "session", "agent", "kind", "ts", "key", "payload"}
    assert event["created"] is True
    assert event["path"] == str(target) and event["session"] == watch_support.SESSION
    assert event["payload"] == {"role": "assistant", "text": "Let me look at the session code."}
    assert watching.rest() == []  # nothing printed twice
    assert code == 0
    assert "stopped: 4 new events from 1 files" in stderr


def test_a_later_watch_reads_only_what_is_new(tmp_path: Path) -> None:
    target = _transcript(tmp_path)
    lines = watch_support.lines()
    watch_support.append(target, lines[0])
    watching = Watching(str(target.parent))
    summary = watching.next_lines(1)[0]
    watching.stop()
    assert f"+2 events into {watch_support.SESSION} (" in summary
    watch_support.append(target, lines[3])
    again = Watching(str(target.parent), "--json")
    new = [json.loads(line) for line in again.next_lines(1)]
    code, stderr = again.stop()
    assert [e["key"] for e in new] == ["u2:0"] and code == 0
    assert "stopped: 1 new events from 1 files" in stderr


def test_watch_takes_the_configured_paths(tmp_path: Path) -> None:
    """The autostarted daemon watches the same paths: whichever stores an event first creates
    it, and the foreground watch still shows every event it reads."""
    target = _transcript(tmp_path)
    watch_support.append(target, watch_support.lines()[0])
    assert invoke("config", "set", "watch.paths", str(target.parent)).exit_code == 0
    watching = Watching("--json")
    events = [json.loads(line) for line in watching.next_lines(2)]
    watching.stop()
    assert [(e["session"], e["kind"]) for e in events] == [
        (watch_support.SESSION, "session.meta"),
        (watch_support.SESSION, "message"),
    ]
    status = json.loads(invoke("status", "--json").stdout)
    assert status["events"] == 2  # stored once, whoever stored it


def test_nothing_to_watch_is_a_usage_error() -> None:
    result = invoke("watch")
    assert result.exit_code == 2
    assert_error(result.stderr, contains="nothing to watch")
    assert "toka config set watch.paths" in result.stderr


def test_a_path_that_does_not_exist_is_not_found(tmp_path: Path) -> None:
    result = invoke("watch", str(tmp_path / "nowhere"))
    assert result.exit_code == 3
    assert_error(result.stderr, contains="no file or folder at")


def test_an_unknown_format_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("watch", str(tmp_path), "--format", "yaml")
    assert result.exit_code == 2
    assert_error(result.stderr, contains="unknown format 'yaml'")


def _config_json(*args: str, env: dict[str, Any] | None = None) -> dict[str, Any]:
    result = invoke("config", *args, "--json", env=env)
    assert result.exit_code == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_watch_paths_are_a_list_in_the_file_and_pathsep_separated_elsewhere(tmp_path: Path) -> None:
    assert invoke("config", "set", "watch.paths", f"/a{os.pathsep}/b").exit_code == 0
    assert '[watch]\npaths = [\n    "/a",\n    "/b",\n]' in resolve_paths().config_file.read_text()
    assert _config_json("get", "watch.paths")["value"] == ["/a", "/b"]
    assert invoke("config", "get", "watch.paths").stdout == "/a\n/b\n"
    from_env = _config_json("get", "watch.paths", env={"TOKA_WATCH_PATHS": "/c"})
    assert from_env == {"key": "watch.paths", "value": ["/c"], "source": "env TOKA_WATCH_PATHS"}


def test_watch_paths_of_the_wrong_type_are_a_config_error() -> None:
    resolve_paths().config_file.write_text("[watch]\npaths = 3\n")
    result = invoke("config", "get", "watch.paths")
    assert result.exit_code == 2
    assert_error(result.stderr, contains="watch.paths from")
    assert "must be a list of strings" in result.stderr


def test_status_shows_what_the_daemon_watches(tmp_path: Path) -> None:
    target = _transcript(tmp_path)
    watch_support.append(target, watch_support.lines()[0])
    assert invoke("config", "set", "watch.paths", str(target.parent)).exit_code == 0
    result = invoke("status")
    assert result.exit_code == 0, result.stderr
    assert "watch" in result.stdout and "events ingested" in result.stdout


@pytest.mark.slow
def test_a_daemon_that_dies_is_started_again_and_nothing_is_lost(tmp_path: Path) -> None:
    target = _transcript(tmp_path)
    lines = watch_support.lines()
    watch_support.append(target, lines[0])
    watching = Watching(str(target.parent), "--json")
    try:
        assert len(watching.next_lines(2)) == 2
        pid = int((resolve_paths().pidfile).read_text())
        os.kill(pid, signal.SIGKILL)
        watch_support.append(target, lines[3])
        again = [json.loads(line) for line in watching.next_lines(1)]
    finally:
        code, stderr = watching.stop()
    assert [e["key"] for e in again] == ["u2:0"] and again[0]["created"] is True
    assert int(resolve_paths().pidfile.read_text()) != pid  # a new daemon took it
    assert code == 0, stderr
