"""`toka daemon run`, the command examples/toka.service starts: in the foreground, logging to
stderr, and stopping cleanly on SIGTERM as systemd sends it."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from cli_support import ROOT, TOKA
from daemons import PATIENCE

from daemon.client.autostart import answers
from daemon.client.sync import Client
from daemon.paths import resolve_paths


def test_the_example_unit_runs_the_daemon_in_the_foreground() -> None:
    unit = (ROOT / "examples" / "toka.service").read_text(encoding="utf-8")
    exec_start = [line for line in unit.splitlines() if line.startswith("ExecStart=")]
    assert len(exec_start) == 1 and exec_start[0].endswith("/toka daemon run")
    assert "Type=simple" in unit and "WantedBy=default.target" in unit


def test_toka_daemon_run_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    paths = resolve_paths()
    log = tmp_path / "daemon.stderr"
    with open(log, "wb") as stderr:
        process = subprocess.Popen(
            [str(TOKA), "daemon", "run"], stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr, env=dict(os.environ)
        )
    try:
        deadline = time.monotonic() + PATIENCE
        while not answers(paths):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.01)
        with Client(paths, autostart=False) as client:
            assert client.call("hello")["pid"] == process.pid
            client.record("s", "k", {"n": 1})
        process.send_signal(signal.SIGTERM)
        assert process.wait(PATIENCE) == 0, log.read_text()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert not paths.socket.exists()
    assert "stopped" in log.read_text()  # logged to stderr, where the journal reads it
