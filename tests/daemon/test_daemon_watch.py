"""The daemon's own watcher (`[watch] paths`): transcripts appended line by line land in the log,
each line once, through restarts and kills of the daemon."""

from __future__ import annotations

import shutil
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import watch_support
from daemon_support import Spawned, Spawner, events_of, wait_for, write_config
from transcripts import TRANSCRIPTS, shared_or_skip

from daemon.ingest.formats import PARSERS
from daemon.ingest.lines import ParseStats
from daemon.paths import resolve_paths
from store.errors import NotFound


def _watch(folder: Path) -> None:
    write_config(resolve_paths(), f'[watch]\npaths = ["{folder}"]\n')


def _keys(events: list[dict[str, Any]]) -> Counter[str]:
    """The keys of the events read from the transcript (not the lifecycle events usage causes)."""
    return Counter(e["key"] for e in events if not e["payload"].get("revision") and e["kind"] != "lifecycle")


def _expected(path: Path, fmt: str) -> list[dict[str, Any]]:
    return list(PARSERS[fmt](path, ParseStats()))


def _logged(daemon: Spawned, session: str) -> list[dict[str, Any]]:
    with daemon.client() as client:
        try:
            return events_of(client, session=session)
        except NotFound:  # nothing of it is in the log yet
            return []


def _wait_until_logged(daemon: Spawned, session: str, expected: list[dict[str, Any]]) -> None:
    wanted = {e["key"] for e in expected if e["session"] == session}
    wait_for(lambda: wanted <= set(_keys(_logged(daemon, session))), "the lines written so far are in the log")


def _grow_line_by_line(
    spawn: Spawner, source_lines: list[bytes], target: Path, session: str, fmt: str
) -> tuple[Spawned, int]:
    """Write the lines to ``target`` one by one (each in two halves), waiting after each until its
    events are logged; stop the daemon a third of the way (SIGTERM) and kill it two thirds of
    the way (SIGKILL), writing the next line while it is down. The daemon running at the end,
    and how many restarts there were."""
    daemon = spawn()
    restarts = 0
    for number, line in enumerate(source_lines, 1):
        watch_support.append(target, line[: len(line) // 2])
        watch_support.append(target, line[len(line) // 2 :])
        if number in (len(source_lines) // 3, 2 * len(source_lines) // 3):
            if number == len(source_lines) // 3:
                daemon.stop(signal.SIGTERM)
            else:
                daemon.kill()
            restarts += 1
            continue  # this line is written while no daemon runs
        if daemon.process.poll() is not None:
            daemon = spawn()
        _wait_until_logged(daemon, session, _expected(target, fmt))
    return daemon, restarts


def test_a_transcript_written_line_by_line_lands_once_through_restarts(spawn: Spawner, tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "app"
    folder.mkdir(parents=True)
    _watch(tmp_path / "projects")
    target = folder / f"{watch_support.SESSION}.jsonl"
    daemon, restarts = _grow_line_by_line(spawn, watch_support.lines(), target, watch_support.SESSION, "claude-code")
    assert restarts == 2
    logged = _logged(daemon, watch_support.SESSION)
    expected = _expected(target, "claude-code")
    assert _keys(logged) == Counter(e["key"] for e in expected)  # none lost, none doubled
    with daemon.client() as client:
        usage = client.call("usage", session=watch_support.SESSION)
    assert usage["output_tokens"] == 180 + 95  # one response's growing output counted once
    assert usage["input_tokens"] == 8 and usage["cache_read_tokens"] == 24_400
    assert usage["context_tokens"] == 4 + 200 + 12_400  # the latest response's prompt
    assert usage["calls"] == 2


@pytest.mark.slow
@pytest.mark.parametrize("name", ["claude/marot__tool_heavy.jsonl", "codex/jazzyalex__stage0_codex_small.jsonl"])
def test_a_real_transcript_written_line_by_line_lands_once(spawn: Spawner, tmp_path: Path, name: str) -> None:
    source = shared_or_skip("fixtures", "transcripts", *name.split("/"))
    fmt = "claude-code" if name.startswith("claude") else "codex"
    whole = _expected(source, fmt)
    session = whole[-1]["session"]
    folder = tmp_path / "sessions"
    folder.mkdir()
    _watch(folder)
    target = folder / source.name
    lines = source.read_bytes().splitlines(keepends=True)[:40]
    daemon, _ = _grow_line_by_line(spawn, lines, target, session, fmt)
    expected = [e for e in _expected(target, fmt) if e["session"] == session]
    assert _keys(_logged(daemon, session)) == Counter(e["key"] for e in expected)


def test_files_already_there_are_read_at_start_and_not_again_after_a_restart(spawn: Spawner, tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    folder.mkdir()
    target = folder / f"{watch_support.SESSION}.jsonl"
    target.write_bytes(b"".join(watch_support.lines()))
    _watch(folder)
    daemon = spawn()
    expected = _expected(target, "claude-code")
    _wait_until_logged(daemon, watch_support.SESSION, expected)
    daemon.stop()
    daemon = spawn()
    wait_for(lambda: daemon.status()["watch"]["files"] == 1, "the restarted watcher looked at the file")
    status = daemon.status()["watch"]
    assert status["events"] == 0  # nothing was new
    assert status["paths"] == [str(folder)] and status["missing"] == [] and status["last_error"] is None
    assert len(_logged(daemon, watch_support.SESSION)) == len(expected)


def test_a_missing_watch_path_is_reported_and_the_daemon_serves(spawn: Spawner, tmp_path: Path) -> None:
    _watch(tmp_path / "not-there")
    daemon = spawn()
    status = daemon.status()["watch"]
    assert status["missing"] == [str(tmp_path / "not-there")]
    assert "no file or folder at" in daemon.log()


def test_bad_lines_in_a_watched_file_are_skipped_and_logged(spawn: Spawner, tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    folder.mkdir()
    _watch(folder)
    daemon = spawn()
    target = folder / f"{watch_support.SESSION}.jsonl"
    lines = watch_support.lines()
    watch_support.append(target, lines[0] + b"{not json\n" + lines[1])
    _wait_until_logged(daemon, watch_support.SESSION, _expected(target, "claude-code"))
    wait_for(lambda: daemon.status()["watch"]["bad_lines"] == 1, "the bad line is counted")
    assert f"{target}:2: not JSON" in daemon.log()


def test_without_watch_paths_the_status_says_so(daemon: Spawned) -> None:
    assert daemon.status()["watch"] is None


def test_the_watched_session_copies_cleanly(spawn: Spawner, tmp_path: Path) -> None:
    """A whole Claude Code projects folder (main file and its subagents) copied in at once."""
    source = shared_or_skip("fixtures", "transcripts", "claude")
    folder = tmp_path / "projects"
    shutil.copytree(source / "marot__fa812bfe-b295-4cca-9c2f-fdf01028cb46", folder / "fa812bfe")
    _watch(folder)
    daemon = spawn()
    wait_for(lambda: daemon.status()["watch"]["files"] == 3, "the three subagent files are read")
    session = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"
    expected = [e for p in sorted(folder.rglob("*.jsonl")) for e in _expected(p, "claude-code")]
    wait_for(
        lambda: _keys(_logged(daemon, session)) == Counter(e["key"] for e in expected),
        "every subagent event is in the parent session",
    )
    assert TRANSCRIPTS.exists()
