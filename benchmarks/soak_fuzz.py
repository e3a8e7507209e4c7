"""Fuzz soak: the protocol fuzzing of the suite at length, on one daemon.

Runs tests/daemon/test_daemon_fuzz.py's long test with many rounds: a seeded mix of arbitrary
bytes, known operations with fields of every type, odd unicode in events, deeply nested JSON,
half lines and clients that vanish mid-request. Every line must get one clean answer, the
daemon must stay up, and after a warm-up (the first quarter) it may gain no file descriptors
and at most 64 MiB of resident memory. Then runs the hypothesis tests of the same file with
more examples. Prints the figures.

    .venv/bin/python benchmarks/soak_fuzz.py [--rounds 50000] [--examples 2000] [--seed N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from soak_support import ROOT, run_soak

FILE = "tests/daemon/test_daemon_fuzz.py"
LONG = FILE + "::test_a_long_fuzz_leaks_no_descriptors_and_no_memory_beyond_a_bound"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50_000)
    parser.add_argument("--examples", type=int, default=2_000, help="hypothesis examples per fuzz test")
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args()
    env = {"TOKA_FUZZ_ROUNDS": str(args.rounds), "TOKA_FUZZ_SEED": str(args.seed)}
    figures = run_soak(LONG, env, "TOKA_FUZZ_REPORT")
    others = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", FILE, "-k", "not long"]
    hypothesis = subprocess.run(others, cwd=ROOT, env=os.environ | env | {"TOKA_FUZZ_EXAMPLES": str(args.examples)})
    if hypothesis.returncode != 0:
        raise SystemExit("the hypothesis fuzz tests failed: see the output above")
    print(json.dumps(figures | {"hypothesis_examples_per_test": args.examples}))


if __name__ == "__main__":
    main()
