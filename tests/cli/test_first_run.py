"""A first run just works: in a new home, the first command that shows history (`toka report`,
`toka sessions`) finds the agents' own folders imported by the daemon it starts, waiting for that
import with one line on stderr in a pipe, and prints what a `toka import` of the same files gives;
`toka status` and `toka doctor` say which folders are followed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_homes import SMALL_CLAUDE, SMALL_CODEX, AgentsHome, fill_from_fixtures
from cli_support import TOKA, kill_daemon_of, toka
from transcripts import TRANSCRIPTS, shared_or_skip

REPORT = ("report", "daily", "--json", "--timezone", "UTC")
SESSIONS = ("sessions", "--json")
# What a command waiting for the first import says on stderr in a pipe, once.
WAITING = re.compile(
    r"^toka: importing the agents' history \(\d+ of 29 files read\); the answer follows once it is done$"
)


@pytest.fixture(scope="module")
def imported() -> Iterator[dict[str, Any]]:
    """`toka report daily --json` and `toka sessions --json` of a home the shared fixtures were
    imported into with `toka import`: what a first run must show."""
    shared_or_skip("fixtures", "transcripts")
    home = Path(tempfile.mkdtemp(prefix="tkr", dir="/tmp"))
    env = {**os.environ, "TOKA_HOME": str(home), "TOKA_WATCH_AGENTS": "false", "TZ": "UTC"}

    def run(*args: str) -> str:
        done = subprocess.run([str(TOKA), *args], capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    try:
        run("import", str(TRANSCRIPTS / "claude"), str(TRANSCRIPTS / "codex"))
        yield {"report": json.loads(run(*REPORT)), "sessions": json.loads(run(*SESSIONS))}
    finally:
        kill_daemon_of(home)
        shutil.rmtree(home, ignore_errors=True)


def _first_command(agents_home: AgentsHome, *args: str) -> tuple[Any, list[str]]:
    """The shared fixtures in the agents' folders of a new home, then ``toka ARGS`` in a pipe, which
    starts the daemon: its JSON, and its stderr lines."""
    fill_from_fixtures(agents_home, None, None)
    done = toka(*args, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr.splitlines()


def test_report_daily_right_after_a_fresh_start_has_the_full_totals(
    agents_home: AgentsHome, imported: dict[str, Any]
) -> None:
    report, stderr = _first_command(agents_home, *REPORT)
    assert report == imported["report"]
    assert report["totals"]["calls"] > 0


def test_a_command_waiting_for_the_import_says_so_in_one_line_on_stderr(
    agents_home: AgentsHome, imported: dict[str, Any]
) -> None:
    sessions, stderr = _first_command(agents_home, *SESSIONS)
    assert len(stderr) == 1 and WAITING.match(stderr[0]), stderr
    assert _by_content(sessions) == _by_content(imported["sessions"])
    assert len(sessions["sessions"]) == 23


def test_status_and_doctor_show_the_followed_folders(agents_home: AgentsHome) -> None:
    fill_from_fixtures(agents_home, SMALL_CLAUDE, SMALL_CODEX)
    assert toka("sessions", "--json").returncode == 0  # the daemon started, and its import done
    status = toka("status")
    assert status.returncode == 0, status.stderr
    rows = {line.split(None, 1)[0]: line.split(None, 1)[1].strip() for line in status.stdout.splitlines()}
    assert rows["agents"] == f"following {agents_home.claude} (6 files), {agents_home.codex} (2 files)"
    imported_at = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
    assert re.fullmatch(f"the agents' history imported {imported_at}; followed since", rows["history"])
    doctor = toka("doctor", "--json")
    checks = {check["name"]: check for check in json.loads(doctor.stdout)["checks"]}
    assert checks["agents"]["status"] == "ok"
    assert checks["agents"]["detail"] == f"{rows['agents']}; {rows['history']}"


def test_status_says_so_when_no_agent_folder_is_found(agents_home: AgentsHome) -> None:
    shutil.rmtree(agents_home.home / ".claude")
    shutil.rmtree(agents_home.home / ".codex")
    status = toka("status", "--json")
    watch = json.loads(status.stdout)["watch"]
    assert [folder["found"] for folder in watch["agents"]] == [False, False, False]
    assert watch["history"]["state"] == "done" and watch["history"]["imported_at"] is None
    rows = toka("status").stdout
    looked = f"{agents_home.home}/.config/claude/projects, {agents_home.claude}, {agents_home.codex}"
    assert f"no agent's folder found (looked in {looked})" in rows


def _by_content(found: dict[str, Any]) -> list[dict[str, Any]]:
    """The sessions without where their events landed in the log (seqs, and the head hash that
    chains them), which differs with the order the files were read in."""
    return [{k: v for k, v in s.items() if k not in ("head", "first_seq", "last_seq")} for s in found["sessions"]]
