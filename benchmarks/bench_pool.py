"""Memory pool benchmark: pool.put and pool.get of small values through the daemon, one request
at a time, against a bare Unix-socket echo server measured in the same run.

Each client sends one request line and reads one answer line before the next, over one raw
socket connection: the request lines are encoded before the clock starts, and an answer is
only checked for ``"ok":true``, so the client does the same work against both servers and the
difference is the daemon's (the echo server answers each line with itself). The values are 64 bytes under keys like
``bench/000123``. The echo rate is the floor: what one round trip through an asyncio server in
another process costs on this machine, with no work done. Target: pool put and get each at or
above 70% of it. Rounds alternate echo / put / get, so drift in machine load hits all alike;
the reported rate is the median over the rounds.

Run ``python benchmarks/bench_pool.py`` (``--quick`` for fewer requests, ``--json`` for JSON).
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_foundation import DaemonProcess, Home, log, machine, start_echo_server  # noqa: E402

from daemon.protocol import request  # noqa: E402

VALUE = "v" * 64
TARGET = 0.70


def timed(fn: Callable[[int], None], start: int, count: int) -> float:
    """Requests per second of ``fn`` over ``count`` calls."""
    began = time.perf_counter()
    for n in range(start, start + count):
        fn(n)
    return count / (time.perf_counter() - began)


def run(per_round: int, rounds: int, keys: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="tkpool", dir="/tmp"))
    echo_path = str(work / "echo.sock")
    server = start_echo_server(echo_path)
    rates: dict[str, list[float]] = {"echo": [], "put": [], "get": []}
    puts = [request(n, "pool.put", {"key": f"bench/{n:06d}", "value": VALUE, "ttl": None}) for n in range(keys)]
    gets = [request(n, "pool.get", {"key": f"bench/{n:06d}"}) for n in range(keys)]
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(echo_path)
        reader = sock.makefile("rb")
        with DaemonProcess(Home(work, "home")) as daemon, daemon.client() as client:
            pool = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            pool.connect(str(daemon.home.paths.socket))
            answers = pool.makefile("rb")

            def echo(n: int) -> None:
                sock.sendall(puts[n % keys])
                reader.readline()

            def put(n: int) -> None:
                pool.sendall(puts[n % keys])
                if b'"ok":true' not in answers.readline():
                    raise RuntimeError("pool.put failed")

            def get(n: int) -> None:
                pool.sendall(gets[n % keys])
                if b'"ok":true' not in answers.readline():
                    raise RuntimeError("pool.get failed")

            steps = (("echo", echo), ("put", put), ("get", get))
            for _, fn in steps:  # warm-up; also fills the pool so that every get hits
                timed(fn, 0, keys)
            for r in range(rounds):
                log(f"round {r + 1}/{rounds}: echo, put, get ({per_round:,} requests each)")
                for name, fn in steps:
                    rates[name].append(timed(fn, r * per_round, per_round))
            stats = client.call("pool.stats")
            answers.close()
            pool.close()
        reader.close()
        sock.close()
    finally:
        server.terminate()
        server.join()
        shutil.rmtree(work, ignore_errors=True)
    echo_rate = statistics.median(rates["echo"])
    result: dict[str, Any] = {"machine": machine(), "value_bytes": len(VALUE), "requests_per_round": per_round}
    result["echo_rps"] = echo_rate
    for name in ("put", "get"):
        rate = statistics.median(rates[name])
        ratio = rate / echo_rate
        result[name] = {"rps": rate, "ratio": ratio, "target": TARGET, "pass": ratio >= TARGET, "rounds": rates[name]}
    result["echo_rounds"] = rates["echo"]
    result["pool_after"] = {k: stats[k] for k in ("entries", "used_bytes", "puts", "gets")}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer requests per round")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    options = parser.parse_args()
    per_round, rounds = (2_000, 3) if options.quick else (10_000, 5)
    result = run(per_round, rounds, keys=1_000)
    if options.json:
        print(json.dumps(result, indent=2))
        return
    print(f"echo round trip: {result['echo_rps']:,.0f} req/s (median of {rounds} rounds)")
    for name in ("put", "get"):
        row = result[name]
        verdict = "PASS" if row["pass"] else "SHORT"
        print(f"pool.{name} 64 B: {row['rps']:,.0f} req/s = {row['ratio']:.0%} of echo (target ≥ 70%) {verdict}")


if __name__ == "__main__":
    main()
