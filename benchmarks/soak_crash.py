"""Crash soak: 100 SIGKILLs of the daemon under 8 appending clients.

Runs the suite's crash test (tests/daemon/test_daemon_crash.py) at full length: each round, 8
clients append batches, and one more keeps 32 single-event appends in flight on its connection,
until the daemon is killed at a random moment; after each restart every acknowledged event must
be in the log, in order, and verify must pass. Prints the figures (kills, events acknowledged,
the pipelined writer's among them, lost: 0 or the test fails).

    .venv/bin/python benchmarks/soak_crash.py [--rounds 100] [--writers 8] [--durability full]
"""

from __future__ import annotations

import argparse
import json

from soak_support import run_soak

TEST = "tests/daemon/test_daemon_crash.py::test_sigkill_during_appends_loses_no_acknowledged_event"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--durability", choices=("normal", "full"), default="normal")
    args = parser.parse_args()
    env = {"TOKA_CRASH_ROUNDS": str(args.rounds), "TOKA_CRASH_WRITERS": str(args.writers)}
    print(json.dumps(run_soak(f"{TEST}[{args.durability}]", env, "TOKA_CRASH_REPORT")))


if __name__ == "__main__":
    main()
