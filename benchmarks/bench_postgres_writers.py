"""One event per transaction on PostgreSQL: a daemon's writers against raw psycopg's.

Starts a throw-away PostgreSQL server with its default durability (tests/postgres_server.py, as
bench_postgres.py does), then measures, alternating the sides in each repetition so that drift
hits them alike:

- **R1**: one process of raw, synchronous psycopg writing the foundation's 232-byte tool-call
  events one per transaction, each as toka writes it (the payload's row in ``blobs``, the
  sealed, chained row in ``events``, toka's own tables and indexes, the rows computed before the
  clock starts): ``with conn.transaction()`` around one ``INSERT ... VALUES`` per table, the way
  one writes it by hand. **R8**: 8 such processes on 8 connections, a session each.
- **toka, 1 writer**: one client (daemon.client.sync) appending the same events one per request
  to a daemon on its own fresh database; the ratio is against R1. The daemon's CPU per event
  (every thread's, /proc) is reported beside: the wall time at this size moves with the load.
- **toka, 8 writers**: 8 client processes, one event per request, against R8 (the daemon commits
  concurrent clients' events together, which raw per-event transactions cannot).

``--other-tree PATH`` runs a second daemon from another checkout of toka (``git archive`` of a
commit, say) beside each of this tree's, with the same clients, for an A/B in one run.

    python benchmarks/bench_postgres_writers.py [--events N] [--reps N] [--other-tree PATH] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import postgres_server  # noqa: E402
import psycopg  # noqa: E402
from bench_capacity import cpu_ns  # noqa: E402
from bench_foundation import (  # noqa: E402
    CLIENTS,
    DaemonProcess,
    Home,
    _concurrent_worker,
    event_dict,
    log,
    machine,
    sealed_rows,
)
from bench_postgres import fresh_database, median, postgres_settings  # noqa: E402

from daemon.client.sync import Client  # noqa: E402

WARMUP = 50  # events each writer sends before its clock starts (connections, plans, caches)
# What the targets ask of toka against the raw writers (docs/benchmarks.md).
TARGETS = {"one_writer_ratio": 0.5, "eight_writers_ratio": 1.5}


def _raw_writer(url: str, index: int, count: int, barrier: Any, results: Any) -> None:
    """One raw writer: ``count`` events of its own session, one transaction each."""
    # Seqs of writer i start at i * 10^7 + 1, so that writers never collide.
    rows = sealed_rows(f"raw-{index}", 0, WARMUP + count, index * 10_000_000 + 1)
    with psycopg.connect(url, autocommit=True) as conn:
        for n, row in enumerate(rows):
            if n == WARMUP:
                if barrier is not None:
                    barrier.wait()
                start = time.perf_counter()
            with conn.transaction():
                conn.execute("INSERT INTO blobs VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING", row.blob)
                conn.execute("INSERT INTO events VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)", row.event)
        end = time.perf_counter()
    results.put((index, start, end, count))


def raw_writers(admin: str, name: str, writers: int, per_writer: int) -> float:
    """Aggregate events/s of ``writers`` raw processes (one: no barrier)."""
    url = fresh_database(admin, name)
    ctx = mp.get_context("spawn")
    barrier, results = (ctx.Barrier(writers) if writers > 1 else None), ctx.Queue()
    procs = [ctx.Process(target=_raw_writer, args=(url, i, per_writer, barrier, results)) for i in range(writers)]
    for proc in procs:
        proc.start()
    done = [results.get(timeout=600) for _ in procs]
    for proc in procs:
        proc.join()
    return sum(d[3] for d in done) / (max(d[2] for d in done) - min(d[1] for d in done))


def empty_database(admin: str, name: str) -> str:
    """A new, empty database: the daemon that opens it makes toka's schema with its own code."""
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return postgres_server.with_dbname(admin, name)


def daemon_settings(url: str, tree: str | None) -> dict[str, str]:
    settings = postgres_settings(url)
    if tree is not None:  # the daemon's code from that tree, ahead of the installed one
        settings["PYTHONPATH"] = tree + os.pathsep + os.environ.get("PYTHONPATH", "")
    return settings


def daemon_command(tree: str | None) -> list[str]:
    # -P: not the working directory first on sys.path (this tree, when run from it), PYTHONPATH's tree.
    return [sys.executable, "-P", "-m", "daemon"] if tree is not None else [sys.executable, "-m", "daemon"]


def toka_one_writer(
    work: Path, name: str, settings: dict[str, str], command: list[str], count: int
) -> tuple[float, float]:
    """Events/s of one client appending one event per request, and the daemon's CPU per event
    meanwhile (µs, every thread's; the derived tables it applied behind them included)."""
    home = Home(work, name)
    events = [event_dict("one", i) for i in range(WARMUP + count)]
    with DaemonProcess(home, command, settings) as daemon, Client(daemon.home.paths, autostart=False) as client:
        for event in events[:WARMUP]:
            client.call("events.append", events=[event])
        cpu, start = cpu_ns(daemon.pid), time.perf_counter()
        for event in events[WARMUP:]:
            client.call("events.append", events=[event])
        elapsed = time.perf_counter() - start
        client.call("status")  # what the projector had not applied yet, applied
        cpu = cpu_ns(daemon.pid) - cpu
    shutil.rmtree(home.root, ignore_errors=True)
    return count / elapsed, cpu / count / 1000


def toka_eight_writers(work: Path, name: str, settings: dict[str, str], command: list[str], per_client: int) -> float:
    """Aggregate events/s of CLIENTS processes appending one event per request."""
    home = Home(work, name)
    ctx = mp.get_context("spawn")
    with DaemonProcess(home, command, settings):
        barrier, results = ctx.Barrier(CLIENTS), ctx.Queue()
        workers = [
            ctx.Process(target=_concurrent_worker, args=(str(home.root), i, per_client, barrier, results))
            for i in range(CLIENTS)
        ]
        for worker in workers:
            worker.start()
        done = [results.get(timeout=600) for _ in workers]
        for worker in workers:
            worker.join()
    shutil.rmtree(home.root, ignore_errors=True)
    return sum(d[3] for d in done) / (max(d[2] for d in done) - min(d[1] for d in done))


def run(events: int, reps: int, other_tree: str | None) -> dict[str, Any]:
    server = postgres_server.start(durable=True)
    work = Path(tempfile.mkdtemp(prefix="tkpw", dir="/tmp"))
    trees: dict[str, str | None] = {"this": None}
    if other_tree is not None:
        trees["other"] = str(Path(other_tree).resolve())
    per_client = max(50, events // CLIENTS)
    figures: dict[str, list[float]] = {"raw1": [], "raw8": []}
    for side in trees:
        figures[f"{side}1"], figures[f"{side}8"], figures[f"{side}1_cpu_us"] = [], [], []
    loads = [_loadavg()]
    steps: dict[str, str] = {}  # the last schema step each side's daemon made: which code ran
    try:
        for rep in range(reps):
            log(f"rep {rep + 1}/{reps}: one writer")
            figures["raw1"].append(raw_writers(server.url, f"raw1_{rep}", 1, events))
            for side, tree in trees.items():
                url = empty_database(server.url, f"{side}1_{rep}")
                settings, command = daemon_settings(url, tree), daemon_command(tree)
                rate, cpu = toka_one_writer(work, f"{side}1{rep}", settings, command, events)
                steps[side] = _last_step(url)
                figures[f"{side}1"].append(rate)
                figures[f"{side}1_cpu_us"].append(cpu)
            log(f"rep {rep + 1}/{reps}: {CLIENTS} writers")
            figures["raw8"].append(raw_writers(server.url, f"raw8_{rep}", CLIENTS, per_client))
            for side, tree in trees.items():
                url = empty_database(server.url, f"{side}8_{rep}")
                settings, command = daemon_settings(url, tree), daemon_command(tree)
                figures[f"{side}8"].append(toka_eight_writers(work, f"{side}8{rep}", settings, command, per_client))
            loads.append(_loadavg())
    finally:
        shutil.rmtree(work, ignore_errors=True)
        postgres_server.stop(server)
    result: dict[str, Any] = {"machine": machine(), "events": events, "reps": reps, "loadavg": loads, **figures}
    for side in trees:
        result[f"{side}_one_writer_ratio"] = median(figures[f"{side}1"]) / median(figures["raw1"])
        result[f"{side}_eight_writers_ratio"] = median(figures[f"{side}8"]) / median(figures["raw8"])
        # Per repetition, against the reference measured beside it.
        result[f"{side}_one_writer_ratios"] = [t / r for t, r in zip(figures[f"{side}1"], figures["raw1"], strict=True)]
        result[f"{side}_eight_writers_ratios"] = [
            t / r for t, r in zip(figures[f"{side}8"], figures["raw8"], strict=True)
        ]
    result["targets"] = TARGETS
    result["schema_steps"] = steps
    result["other_tree"] = trees.get("other")
    return result


def _last_step(url: str) -> str:
    with psycopg.connect(url) as conn:
        return str(conn.execute("SELECT name FROM toka_migrations ORDER BY seq DESC LIMIT 1").fetchone()[0])  # type: ignore[index]


def _loadavg() -> str:
    return Path("/proc/loadavg").read_text().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2_000, help="events of the one writer; 8 writers share as many")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--other-tree", help="a checkout of toka whose daemon runs beside this tree's")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.events, args.reps, args.other_tree)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"load: {' | '.join(result['loadavg'])}")
    print(f"schema steps made by each side's daemon: {result['schema_steps']}")
    print(f"R1, raw psycopg, 1 writer: {median(result['raw1']):,.0f} ev/s {_each(result['raw1'])}")
    print(f"R8, raw psycopg, {CLIENTS} writers: {median(result['raw8']):,.0f} ev/s {_each(result['raw8'])}")
    for side in ("this", "other"):
        if f"{side}1" not in result:
            continue
        name = "this tree" if side == "this" else result["other_tree"]
        print(
            f"{name}, 1 writer: {median(result[f'{side}1']):,.0f} ev/s {_each(result[f'{side}1'])}"
            f" = {result[f'{side}_one_writer_ratio']:.2f}x R1 (target >= {TARGETS['one_writer_ratio']}x)"
        )
        print(f"{name}, daemon CPU per event, 1 writer: {median(result[f'{side}1_cpu_us']):,.0f} µs")
        print(
            f"{name}, {CLIENTS} writers: {median(result[f'{side}8']):,.0f} ev/s {_each(result[f'{side}8'])}"
            f" = {result[f'{side}_eight_writers_ratio']:.2f}x R8 (target >= {TARGETS['eight_writers_ratio']}x)"
        )


def _each(values: list[float]) -> str:
    return "(" + ", ".join(f"{v:,.0f}" for v in values) + ")"


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
