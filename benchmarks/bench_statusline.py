"""Status line benchmark: `toka statusline` against the least a status line command can do, both as
fresh processes.

Claude Code runs its status line command after every turn, a fresh process each time, so what
matters is the wall time of the whole process. The reference is a minimal standard-library
client in ``python -c``: it connects to the daemon's socket, sends one ``statusline`` line
carrying the same event `toka statusline` sends, and reads the answer (the daemon does the same
work for both: record the input, work out the session's fill, cost and block). `toka statusline`
(the console script) reads the status line's JSON on stdin and prints its line. Each run uses
an input of its own (a distinct ``cost.total_cost_usd``), so both record a new event every time.
The session has 2,000 usage events of its own and there are 20,000 more in the log, so the
block and the session's cost are not free.

As bench_hook.py: a fresh venv with toka installed as a wheel installs it (``--editable``: this
venv), the two alternating after warm-ups, medians of ``--runs`` each. Target: the status line
within 1.5x of the reference. Run from the project root:

    .venv/bin/python benchmarks/bench_statusline.py [--runs 30] [--editable] [--json]
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_foundation import DaemonProcess, Home, described, machine, show
from bench_hook import REFERENCE, process_options, timed_toka

from daemon.client.sync import Client

TARGET = 1.5
SESSION = "bench-statusline"


def status_input(run: int) -> dict[str, Any]:
    """A status line input as Claude Code 2.1 sends it (shared/docs/real-clients.md)."""
    return {
        "session_id": SESSION,
        "transcript_path": f"/tmp/{SESSION}.jsonl",
        "cwd": "/work/shop",
        "model": {"id": "claude-opus-4-6", "display_name": "Opus 4.6"},
        "version": "2.1.332",
        "cost": {"total_cost_usd": round(0.01 * run, 2)},
        "context_window": {"context_window_size": 200_000, "used_percentage": 41.0, "total_input_tokens": 82_000},
        "exceeds_200k_tokens": False,
    }


def seed(home: Home) -> None:
    """The session's own usage, and other sessions' around it, over the last ten hours."""
    now = time.time()
    usage = {"model": "claude-opus-4-6", "input_tokens": 10, "cache_read_tokens": 80_000, "output_tokens": 300}
    with Client(home.paths, autostart=False) as client:
        for first in range(0, 22_000, 1000):
            client.append(
                [
                    {
                        "session": SESSION if n < 2000 else f"other-{n % 50}",
                        "kind": "usage",
                        "agent": "main",
                        "ts": now - 36_000 + 36_000 * n / 22_000,
                        "payload": usage,
                    }
                    for n in range(first, first + 1000)
                ]
            )


def timed(command: list[str], stdin: bytes, env: dict[str, str], prints: bool) -> tuple[float, bytes]:
    start = time.perf_counter()
    result = subprocess.run(command, input=stdin, capture_output=True, env=env, timeout=60)
    elapsed = time.perf_counter() - start
    if result.returncode != 0 or result.stderr or bool(result.stdout) != prints:
        raise RuntimeError(f"{command[:3]} failed: {result.returncode} {result.stdout!r} {result.stderr!r}")
    return elapsed, result.stdout


def main() -> None:
    options = process_options(__doc__)

    work = Path(tempfile.mkdtemp(prefix="tkbs", dir="/tmp"))
    home = Home(work, "h")
    env = {**os.environ, "TOKA_HOME": str(home.root)}
    try:
        python, toka = timed_toka(work, options.editable)
        with DaemonProcess(home):
            info = machine()
            seed(home)
            line_times: list[float] = []
            reference_times: list[float] = []
            shown = b""
            for run in range(-3, options.runs):  # three warm-up rounds
                raw = json.dumps(status_input(2 * run + 100)).encode()
                line_time, shown = timed([str(toka), "statusline"], raw, env, prints=True)
                payload = status_input(2 * run + 101)
                own = json.dumps(payload).encode()
                event = {
                    "session": SESSION,
                    "kind": "statusline",
                    "agent": "main",
                    "ts": time.time(),
                    "key": "statusline:" + hashlib.sha256(own).hexdigest(),
                    "payload": payload,
                }
                request = json.dumps({"id": 1, "op": "statusline", "args": {"event": event}}).encode() + b"\n"
                reference, _ = timed([str(python), "-c", REFERENCE, str(home.paths.socket)], request, env, prints=False)
                if run >= 0:
                    line_times.append(line_time)
                    reference_times.append(reference)
            if home.paths.spool.exists():
                raise RuntimeError("the status line spooled: the daemon did not answer")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    line_ms = statistics.median(line_times) * 1000
    reference_ms = statistics.median(reference_times) * 1000
    result = {
        **described(info),
        "install": "editable (this venv)" if options.editable else "regular (fresh venv)",
        "runs": options.runs,
        "line": shown.decode().strip(),
        "statusline_ms": round(line_ms, 1),
        "reference_ms": round(reference_ms, 1),
        "ratio": round(line_ms / reference_ms, 2),
        "target": TARGET,
        "pass": line_ms / reference_ms <= TARGET,
        "load": [info["load_at_start"], round(os.getloadavg()[0], 2)],
    }
    show(result, options.json)


if __name__ == "__main__":
    main()
