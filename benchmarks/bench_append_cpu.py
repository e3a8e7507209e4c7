"""Daemon CPU per appended event: one client appends single events, one request at a time, to a
real daemon; the daemon process's CPU time (every thread's, ``/proc/PID/task/*/schedstat``) over
the run, divided by the events, with what applying them to the derived tables costs included (the
run ends with ``status``, which applies whatever is left).

Each round starts a fresh daemon on a fresh log, appends ``--warm`` events unmeasured, then
``--events`` measured. Two references in the same run: a bare asyncio JSON echo server's CPU per
round trip (bench_foundation's), and the wall time of the round trips. Target (docs/benchmarks.md):
≤ 100 µs of daemon CPU per event.

Run ``python benchmarks/bench_append_cpu.py`` (``--rounds N``, ``--events N``, ``--json``); to
compare two trees, run it under each with ``PYTHONPATH`` set to the tree, alternating.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_capacity import cpu_ns  # noqa: E402
from bench_foundation import DaemonProcess, Home, event_dict, log  # noqa: E402

TARGET_US = 100.0


def one_round(root: Path, number: int, events: int, warm: int) -> dict[str, float]:
    home = Home(root, f"r{number}", embeddings=False)
    with DaemonProcess(home) as daemon, daemon.client() as client:
        for i in range(warm):
            client.call("events.append", events=[event_dict("warm", i)])
        client.call("status")
        before = cpu_ns(daemon.pid)
        started = time.perf_counter()
        for i in range(events):
            client.call("events.append", events=[event_dict("s", i)])
        wall = time.perf_counter() - started
        client.call("status")  # applies what the projector has not yet
        cpu = cpu_ns(daemon.pid) - before
    shutil.rmtree(home.root, ignore_errors=True)
    return {"cpu_us_per_event": cpu / 1000 / events, "wall_us_per_event": wall * 1e6 / events}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--warm", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tkcpu", dir="/tmp"))
    rounds = []
    try:
        for number in range(args.rounds):
            load = os.getloadavg()[0]
            result = one_round(root, number, args.events, args.warm) | {"load": load}
            log(f"round {number}: {result['cpu_us_per_event']:.0f} µs CPU, {result['wall_us_per_event']:.0f} µs wall")
            rounds.append(result)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    summary: dict[str, Any] = {
        "cpu_us_per_event": statistics.median(r["cpu_us_per_event"] for r in rounds),
        "wall_us_per_event": statistics.median(r["wall_us_per_event"] for r in rounds),
        "load": [round(r["load"], 2) for r in rounds],
        "target_us": TARGET_US,
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(
            f"daemon CPU per appended event: {summary['cpu_us_per_event']:.0f} µs (target ≤ {TARGET_US:.0f});"
            f" round trip {summary['wall_us_per_event']:.0f} µs; load {summary['load']}"
        )


if __name__ == "__main__":
    main()
