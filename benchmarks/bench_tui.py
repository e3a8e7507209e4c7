"""`toka tui`: time to its first frame, and time to open a 100k-event session, each against a
reference measured in the same run.

    .venv/bin/python benchmarks/bench_tui.py [--events N] [--rounds N] [--json]

- first frame: from process start until the dashboard's first screen is drawn (the app writes a
  marker on stderr and exits when ``TOKA_TUI_FIRST_FRAME`` is set), run on a pseudo-terminal as a
  user would, against ``python -c "import textual.app"``. Target: ≤ 2×.
- open a session: a log with one session of N events (default 100,000) appended through the
  daemon in batches; the session is opened as enter opens it (``TokaApp.open_session``) under
  the pilot and timed until its timeline holds its rows, against reading the latest 100 events
  back through ``daemon.client.sync.Client``. The first open, which builds the session screen,
  is reported apart. Target: ≤ 3×.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pty
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BATCH = 5000
SESSION = "bench-long-session"
LAUNCH = (
    "import sys\n"
    "from toka_cli.main import app\n"
    "from toka_cli.commands import tui\n"
    "if 'tui' not in {c.name for c in app.registered_commands}: tui.register(app)\n"
    "sys.argv = ['toka', 'tui']\n"
    "app()\n"
)


def _on_pty(code: str, env: dict[str, str], marker: bytes | None) -> float:
    """Seconds from spawning ``python -c code`` on a pseudo-terminal to ``marker`` on its stderr
    (or to its exit when there is no marker)."""
    primary, secondary = pty.openpty()
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdin=secondary, stdout=secondary, stderr=subprocess.PIPE, env=env, cwd=ROOT
    )
    os.close(secondary)
    try:
        if marker is None:
            process.wait(60)
            return time.perf_counter() - start
        assert process.stderr is not None
        seen = b""
        while marker not in seen:
            chunk = os.read(process.stderr.fileno(), 4096)
            if not chunk:
                raise RuntimeError(f"the app exited without drawing a frame: {seen.decode(errors='replace')}")
            seen += chunk
        elapsed = time.perf_counter() - start
        process.wait(60)
        return elapsed
    finally:
        _drain(primary)
        os.close(primary)
        if process.poll() is None:
            process.kill()
            process.wait()


def _drain(fd: int) -> None:
    os.set_blocking(fd, False)
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass


def first_frame(rounds: int, env: dict[str, str]) -> dict[str, float]:
    from toka_cli.tui.app import FIRST_FRAME_ENV, FIRST_FRAME_MARKER

    tui, reference = [], []
    for _ in range(rounds):
        reference.append(_on_pty("import textual.app", env, None))
        tui.append(_on_pty(LAUNCH, {**env, FIRST_FRAME_ENV: "1"}, FIRST_FRAME_MARKER))
    tui_s, ref_s = statistics.median(tui), statistics.median(reference)
    return {"tui_first_frame_s": tui_s, "import_textual_s": ref_s, "ratio": tui_s / ref_s}


def fill_session(events: int) -> None:
    from daemon.client.sync import Client

    with Client() as client:
        for start in range(0, events, BATCH):
            batch = [
                {
                    "session": SESSION,
                    "agent": "main",
                    "kind": "message",
                    "payload": {"role": "assistant", "text": f"step {n}"},
                }
                for n in range(start, min(events, start + BATCH))
            ]
            client.append(batch)


def open_session(rounds: int) -> dict[str, float]:
    """Open the session as the dashboard does (enter on a row: ``TokaApp.open_session``) until its
    timeline holds its rows; the first open builds the session screen, later ones reuse it."""
    from daemon.client.sync import Client
    from toka_cli.tui.app import TokaApp
    from toka_cli.tui.rows_view import RowsView
    from toka_cli.tui.screens.session import PAGE

    reference = []
    with Client() as client:
        for _ in range(rounds):
            start = time.perf_counter()
            client.call("events.query", session=SESSION, order="desc", limit=100)
            reference.append(time.perf_counter() - start)

    async def measure() -> list[float]:
        times = []
        app = TokaApp()
        async with app.run_test(size=(100, 30)) as pilot:
            while app.client is None:
                await pilot.pause(0.01)
            for _ in range(rounds + 1):
                await pilot.pause(0.2)
                start = time.perf_counter()
                app.open_session(SESSION)
                while not app.screen.query("#timeline"):
                    await asyncio.sleep(0)
                table = app.screen.query_one("#timeline", RowsView)
                while table.row_count < PAGE:
                    await asyncio.sleep(0)
                times.append(time.perf_counter() - start)
                # The title and the curve are read next: let them arrive before leaving, so that
                # the next open does not wait behind them on the connection.
                while any(worker.group == "session" and worker.is_running for worker in app.workers):
                    await pilot.pause(0.01)
                app.action_leave_session()
            # The bound under it: switching to the session tab as it is, with nothing to read.
            for _ in range(rounds):
                await pilot.pause(0.2)
                start = time.perf_counter()
                await app.switch_mode("session")
                switches.append(time.perf_counter() - start)
                await pilot.pause(0.2)
                app.action_leave_session()
        return times

    switches: list[float] = []
    first, *tui = asyncio.run(measure())
    tui_s, ref_s = statistics.median(tui), statistics.median(reference)
    return {
        "tui_open_session_s": tui_s,
        "tui_first_open_s": first,
        "tab_switch_s": statistics.median(switches),
        "client_read_100_s": ref_s,
        "ratio": tui_s / ref_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()

    home = tempfile.mkdtemp(prefix="tkbt", dir="/tmp")
    os.environ["TOKA_HOME"] = home
    os.environ["TOKA_WATCH_AGENTS"] = "false"  # the machine's own history would weigh on the frames measured
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    from daemon.client.sync import Client

    results: dict[str, Any] = {"first_frame": first_frame(options.rounds, env)}
    try:
        fill_session(options.events)
        results["open_session"] = {"events": options.events, **open_session(options.rounds)}
    finally:
        with Client(autostart=False) as client:
            client.call("shutdown")
        shutil.rmtree(home, ignore_errors=True)
    if options.json:
        print(json.dumps(results, indent=2))
        return
    frame, opened = results["first_frame"], results["open_session"]
    print(
        f"first frame      toka tui {frame['tui_first_frame_s'] * 1000:7.1f} ms   "
        f"import textual.app {frame['import_textual_s'] * 1000:7.1f} ms   {frame['ratio']:.2f}× (target ≤ 2×)"
    )
    print(
        f"open {opened['events']:,}-event session {opened['tui_open_session_s'] * 1000:7.1f} ms   "
        f"client reads 100 {opened['client_read_100_s'] * 1000:7.1f} ms   {opened['ratio']:.2f}× (target ≤ 3×)"
        f"   first open {opened['tui_first_open_s'] * 1000:.1f} ms"
    )
    print(f"a bare switch to the session tab {opened['tab_switch_s'] * 1000:7.1f} ms (the bound under opening)")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
