"""Replay benchmark: `toka replay SESSION` as text against `toka replay SESSION --json`.

Both are whole processes of the console script, stdout to a file (as a pipe or a pager reads
it), replaying the same session of ``--events`` events of every kind a Claude Code session has
(messages, tool calls and results, usage, raw records). The JSON replay is the reference: the
text replay reads the same events and only renders them otherwise. Target: at most 1.5x.
Alternating, after a warm-up, median of ``--runs`` each. Run from the project root:

    .venv/bin/python benchmarks/bench_replay.py [--events 2652] [--runs 7] [--json]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_foundation import DaemonProcess, Home, described, machine, show

from daemon.client.sync import Client

TOKA = Path(sys.executable).parent / "toka"
TARGET = 1.5
SESSION = "replayed"


def seed(home: Home, count: int) -> None:
    shapes = [
        ("message", {"role": "user", "text": "Make the client retry with backoff and surface a clear error."}),
        ("tool.call", {"tool": "Grep", "tool_use_id": "t", "input": {"path": "src/auth", "pattern": "timeout"}}),
        ("tool.result", {"tool_use_id": "t", "output": "src/auth/client.py:42: timeout=30\n" * 20, "is_error": False}),
        ("usage", {"model": "claude-opus-4-6", "input_tokens": 3, "cache_read_tokens": 40_000, "output_tokens": 120}),
        ("raw", {"type": "progress", "record": {"type": "progress", "data": {"step": 1, "of": 3}}}),
    ]
    with Client(home.paths, autostart=False) as client:
        for first in range(0, count, 1000):
            batch = []
            for n in range(first, min(first + 1000, count)):
                kind, payload = shapes[n % len(shapes)]
                batch.append({"session": SESSION, "kind": kind, "agent": "main", "key": f"k{n}", "payload": payload})
            client.append(batch)


def timed(args: list[str], env: dict[str, str], out: Path) -> float:
    with out.open("wb") as sink:
        start = time.perf_counter()
        # No timeout: with one, the wait polls with pauses of up to 50 ms, which the figure then counts.
        subprocess.run([str(TOKA), *args], stdout=sink, stderr=subprocess.DEVNULL, env=env, check=True)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=2652)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="tkbr", dir="/tmp"))
    home = Home(work, "h")
    env = {**os.environ, "TOKA_HOME": str(home.root)}
    text_times: list[float] = []
    json_times: list[float] = []
    try:
        with DaemonProcess(home):
            info = machine()
            seed(home, options.events)
            for run in range(-1, options.runs):  # one warm-up round
                pair = [("text", ["replay", SESSION]), ("json", ["replay", SESSION, "--json"])]
                for name, args in pair if run % 2 else reversed(pair):
                    took = timed(args, env, work / f"{name}.out")
                    if run >= 0:
                        (text_times if name == "text" else json_times).append(took)
            text_bytes, json_bytes = (work / "text.out").stat().st_size, (work / "json.out").stat().st_size
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text_ms, json_ms = statistics.median(text_times) * 1000, statistics.median(json_times) * 1000
    show(
        {
            **described(info),
            "events": options.events,
            "runs": options.runs,
            "text_ms": round(text_ms, 1),
            "json_ms": round(json_ms, 1),
            "text_bytes": text_bytes,
            "json_bytes": json_bytes,
            "ratio": round(text_ms / json_ms, 2),
            "target": TARGET,
            "pass": text_ms / json_ms <= TARGET,
            "load": [info["load_at_start"], round(os.getloadavg()[0], 2)],
        },
        options.json,
    )


if __name__ == "__main__":
    main()
