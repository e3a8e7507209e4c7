"""Capacity benchmark: trivial ops with many requests in flight, and what each costs the daemon.

One request at a time, a round trip on this VM is mostly the kernel waking two threads up (about
170 µs); a server's own cost hides under it. So this measures two things instead, against a bare
asyncio Unix-socket echo server in its own process, in the same run:

- capacity: requests per second with ``--in-flight`` (32) connections each keeping one request
  outstanding, answered by the server under test;
- CPU per request: the server process's CPU time (every thread's, from
  ``/proc/PID/task/*/schedstat``, in nanoseconds) over the round, divided by its requests.

The load generator is one asyncio process (this one) doing the same work against every server:
it writes lines encoded in advance and reads one answer line per request. Rounds alternate echo,
``status`` (of a log of 1,000 sessions), ``pool.get`` (64-byte values, every get a hit), so drift
in machine load hits all of them alike; each figure is the median over the rounds, and the load
average is recorded with it.

Targets: each op's capacity ≥ 0.5 of echo's, and its CPU per request ≤ 3× echo's.

Run ``python benchmarks/bench_capacity.py`` (``--quick`` for fewer requests, ``--json`` for JSON).
"""

from __future__ import annotations

import argparse
import asyncio
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

from bench_foundation import DaemonProcess, Home, log, machine, start_echo_server  # noqa: E402

from daemon.protocol import request  # noqa: E402

VALUE = "v" * 64
KEYS = 1_024  # a multiple of the connections, so that the fill puts every key
# The log status counts: sessions of a few events each, as a day of hooks and imports leaves.
SESSIONS = 1_000
EVENTS_PER_SESSION = 5
CAPACITY_TARGET = 0.5
CPU_TARGET = 3.0


def fill_sessions(client: Any) -> None:
    """SESSIONS sessions of EVENTS_PER_SESSION events each, for status to count."""
    events = [
        {"session": f"s{n:05d}", "kind": "note", "payload": {"n": n, "i": i}}
        for n in range(SESSIONS)
        for i in range(EVENTS_PER_SESSION)
    ]
    for start in range(0, len(events), 1000):
        client.call("events.append", events=events[start : start + 1000])


def cpu_ns(pid: int) -> int:
    """CPU time of every thread of ``pid`` so far, in nanoseconds."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as handle:
                total += int(handle.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended between the listing and the read
    return total


async def _connections(path: str, count: int) -> list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    return [await asyncio.open_unix_connection(path, limit=1 << 20) for _ in range(count)]


async def _load(
    conns: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]], lines: list[bytes], total: int, check: bool
) -> float:
    """Seconds to have ``total`` requests answered over ``conns``, one outstanding on each."""
    per_conn = total // len(conns)

    async def one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, offset: int) -> None:
        for n in range(offset, offset + per_conn):
            writer.write(lines[n % len(lines)])
            answer = await reader.readline()
            if check and b'"ok":true' not in answer:
                raise RuntimeError(f"request failed: {answer[:200]!r}")

    began = time.perf_counter()
    await asyncio.gather(*(one(r, w, i * per_conn) for i, (r, w) in enumerate(conns)))
    return time.perf_counter() - began


def run(per_round: int, rounds: int, in_flight: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="tkcap", dir="/tmp"))
    echo_path = str(work / "echo.sock")
    server = start_echo_server(echo_path)
    requests = {
        "status": [request(n, "status", {}) for n in range(KEYS)],
        "pool.get": [request(n, "pool.get", {"key": f"bench/{n:06d}"}) for n in range(KEYS)],
    }
    puts = [request(n, "pool.put", {"key": f"bench/{n:06d}", "value": VALUE, "ttl": None}) for n in range(KEYS)]
    names = ("echo", "status", "pool.get")
    rps: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    loads: list[float] = []
    try:
        with DaemonProcess(Home(work, "home")) as daemon:
            socket_path = str(daemon.home.paths.socket)
            with daemon.client() as client:
                fill_sessions(client)

            async def main() -> None:
                echo_conns = await _connections(echo_path, in_flight)
                daemon_conns = await _connections(socket_path, in_flight)
                await _load(daemon_conns, puts, KEYS, check=True)  # fills the pool: every get hits
                plan = {
                    "echo": (server.pid, echo_conns, requests["pool.get"], False),
                    "status": (daemon.pid, daemon_conns, requests["status"], True),
                    "pool.get": (daemon.pid, daemon_conns, requests["pool.get"], True),
                }
                for name in names:  # warm-up
                    _, conns, lines, check = plan[name]
                    await _load(conns, lines, per_round // 4, check)
                for r in range(rounds):
                    loads.append(os.getloadavg()[0])
                    log(f"round {r + 1}/{rounds}: {per_round:,} requests of each (load {loads[-1]:.2f})")
                    for name in names:
                        pid, conns, lines, check = plan[name]
                        before = cpu_ns(pid)
                        seconds = await _load(conns, lines, per_round, check)
                        cpu[name].append((cpu_ns(pid) - before) / per_round / 1e3)
                        rps[name].append(per_round / seconds)
                for _, writer in echo_conns + daemon_conns:
                    writer.close()

            asyncio.run(main())
    finally:
        server.terminate()
        server.join()
        shutil.rmtree(work, ignore_errors=True)
    echo_rps, echo_cpu = statistics.median(rps["echo"]), statistics.median(cpu["echo"])
    result: dict[str, Any] = {
        "machine": machine(),
        "in_flight": in_flight,
        "requests_per_round": per_round,
        "load_by_round": [round(x, 2) for x in loads],
        "echo": {"rps": echo_rps, "cpu_us": echo_cpu, "rounds_rps": rps["echo"], "rounds_cpu_us": cpu["echo"]},
    }
    for name in names[1:]:
        capacity = statistics.median(a / b for a, b in zip(rps[name], rps["echo"], strict=True))
        cost = statistics.median(a / b for a, b in zip(cpu[name], cpu["echo"], strict=True))
        result[name] = {
            "rps": statistics.median(rps[name]),
            "cpu_us": statistics.median(cpu[name]),
            "capacity_vs_echo": capacity,
            "cpu_vs_echo": cost,
            "pass": capacity >= CAPACITY_TARGET and cost <= CPU_TARGET,
            "rounds_rps": rps[name],
            "rounds_cpu_us": cpu[name],
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer requests per round")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--in-flight", type=int, default=32, help="connections, each with one request outstanding")
    options = parser.parse_args()
    per_round, rounds = (3_200, 5) if options.quick else (16_000, 9)
    result = run(per_round, rounds, options.in_flight)
    if options.json:
        print(json.dumps(result, indent=2))
        return
    loads = result["load_by_round"]
    echo = result["echo"]
    print(f"{options.in_flight} in flight; load average {min(loads):.2f}–{max(loads):.2f} over the rounds")
    print(f"echo: {echo['rps']:,.0f} req/s, {echo['cpu_us']:.1f} µs CPU per request (server)")
    for name in ("status", "pool.get"):
        row = result[name]
        verdict = "PASS" if row["pass"] else "SHORT"
        print(
            f"{name}: {row['rps']:,.0f} req/s = {row['capacity_vs_echo']:.2f} of echo (target ≥ {CAPACITY_TARGET}),"
            f" {row['cpu_us']:.1f} µs CPU = {row['cpu_vs_echo']:.1f}× echo's (target ≤ {CPU_TARGET:g}×) {verdict}"
        )


if __name__ == "__main__":
    main()
