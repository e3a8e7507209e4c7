"""Crash soak: 100 SIGKILLs of the daemon under 8 appending clients.

Runs the suite's crash test (tests/daemon/test_daemon_crash.py) at full length: each round, 8
clients append batches until the daemon is killed at a random moment; after each restart every
acknowledged event must be in the log, in order, and verify must pass. Prints the figures
(kills, events acknowledged, lost: 0 or the test fails).

    .venv/bin/python benchmarks/soak_crash.py [--rounds 100] [--writers 8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--writers", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "soak.json"
        env = os.environ | {
            "TOKA_CRASH_ROUNDS": str(args.rounds),
            "TOKA_CRASH_WRITERS": str(args.writers),
            "TOKA_CRASH_REPORT": str(report),
        }
        started = time.monotonic()
        test = "tests/daemon/test_daemon_crash.py::test_sigkill_during_appends_loses_no_acknowledged_event"
        result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", test], cwd=ROOT, env=env)
        elapsed = time.monotonic() - started
        if result.returncode != 0:
            raise SystemExit(f"the soak failed after {elapsed:.0f} s: see the test output above")
        figures = json.loads(report.read_text()) | {"seconds": round(elapsed, 1)}
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
