"""A first run just works: in a new home, the first command that shows history (`toka report`,
`toka sessions`) finds the agents' own folders imported by the daemon it starts, waiting for that
import with one line on stderr in a pipe, and prints what a `toka import` of the same files gives;
`toka status` and `toka doctor` say which folders are followed."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import tempfile
import termios
import threading
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
    # As every test's daemon runs (tests/conftest.py): the months-old agents are not ended.
    env = {**os.environ, "TOKA_HOME": str(home), "TOKA_WATCH_AGENTS": "false", "TOKA_END_AFTER_S": "0", "TZ": "UTC"}

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


def test_on_a_terminal_a_bar_shows_the_files_imported(agents_home: AgentsHome, imported: dict[str, Any]) -> None:
    """stderr on a terminal: Rich's bar, the files read of those found; stdout still the JSON alone."""
    fill_from_fixtures(agents_home, None, None)
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    process = subprocess.Popen([str(TOKA), *REPORT], stdout=subprocess.PIPE, stderr=terminal, env=dict(os.environ))
    os.close(terminal)
    shown = bytearray()
    reader = threading.Thread(target=_drain, args=(controller, shown), daemon=True)
    reader.start()
    stdout, _ = process.communicate(timeout=120)
    reader.join(30)
    os.close(controller)
    assert process.returncode == 0
    assert json.loads(stdout) == imported["report"]
    text = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", bytes(shown)).decode(errors="replace")
    assert "importing the agents' history: files" in text, text
    assert re.search(r"\b\d+/29\b", text), text


def _drain(controller: int, into: bytearray) -> None:
    """Everything written to the terminal, until its last writer closes it."""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: no process holds the terminal any more
            return
        if not chunk:
            return
        into += chunk


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
    chains them), which differs with the order the files were read in, and so by name: sessions
    last active at the same time are listed in the order their events landed."""
    times = [s["last_ts"] for s in found["sessions"]]
    assert times == sorted(times, reverse=True)  # most recently active first
    landed = ("head", "first_seq", "last_seq")
    return sorted(
        ({k: v for k, v in s.items() if k not in landed} for s in found["sessions"]), key=lambda s: s["session"]
    )
