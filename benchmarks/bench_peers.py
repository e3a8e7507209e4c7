"""Peers benchmark: toka's appends against two Python libraries that keep an event log or
checkpoints in SQLite in the writer's own process: eventsourcing (an aggregate saved with one
new event per save) and LangGraph's ``SqliteSaver.put`` (one checkpoint per put).

Each writes the same ~230-byte payloads (bench_foundation.payload) into a fresh WAL file with
the same durability: ``synchronous = NORMAL`` or ``FULL`` (toka's ``durability`` setting; the
peers' connections are set so, as they do not say it themselves). Two workloads:

- 1 sequential writer: one event per call, each call returning once it is committed; toka
  through its daemon (``events.append`` with one event), the peers in process;
- 8 writer processes on one file (toka: 8 clients of one daemon), started on a barrier,
  1 event per call; events over (last finish − first start);
- 1 pipelined writer (toka only, against the peers' sequential rate of the same round): one
  event per request, with up to PIPELINE requests sent and not yet answered (``Client.submit``
  and ``Client.result``, the documented pipelined API); each event is acknowledged once its
  answer is read, all of them by the end of the round.

Rounds alternate toka, eventsourcing and LangGraph, so that load that comes and goes hits all
three; each ratio is toka's rate over the peer's, the median over the rounds, with the load
average beside it. Targets: 8 writers ≥ 1.0× each at NORMAL and ≥ 2× at FULL, pipelined ≥ 1.0×
eventsourcing (sequential: no target; a socket hop with commit-before-ack costs more than the
peers' whole in-process write, docs/benchmarks.md).

Needs the ``bench`` extra (``pip install -e '.[bench]'``). Run
``python benchmarks/bench_peers.py`` (``--quick`` for fewer events, ``--json`` for JSON).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_foundation import DaemonProcess, Home, event_dict, log, machine, payload  # noqa: E402

from daemon.client.sync import Client  # noqa: E402
from daemon.paths import Paths  # noqa: E402

WRITERS = 8
PIPELINE = 32  # requests in flight for the pipelined writer
PEERS = ("toka", "eventsourcing", "langgraph")
TARGETS = {
    ("sequential", "normal"): None,
    ("sequential", "full"): None,
    ("pipelined", "normal"): 1.0,
    ("pipelined", "full"): 1.0,
    ("concurrent", "normal"): 1.0,
    ("concurrent", "full"): 2.0,
}


# --------------------------------------------------------------------------------------------
# Writers: each returns a function that appends event i and returns once it is committed.


def _synchronous(durability: str) -> str:
    return "FULL" if durability == "full" else "NORMAL"


_LOG: Any = None  # the eventsourcing aggregate class, made once: it registers itself by name


def eventsourcing_writer(path: Path, durability: str, name: str) -> tuple[Callable[[int], None], Callable[[], None]]:
    global _LOG
    from eventsourcing.application import Application
    from eventsourcing.domain import Aggregate, event
    from eventsourcing.sqlite import SQLiteConnectionPool

    create = SQLiteConnectionPool._create_connection
    if not getattr(create, "durability_set", False):

        def with_durability(self: Any) -> Any:
            connection = create(self)
            connection._sqlite_conn.execute(f"PRAGMA synchronous = {_synchronous(os.environ['BENCH_DURABILITY'])}")
            return connection

        with_durability.durability_set = True  # type: ignore[attr-defined]
        SQLiteConnectionPool._create_connection = with_durability  # type: ignore[method-assign]
    os.environ["BENCH_DURABILITY"] = durability

    if _LOG is None:

        class Log(Aggregate):
            @event("Recorded")
            def record(self, body: dict[str, Any]) -> None:
                pass

        _LOG = Log

    app = Application(env={"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(path)})
    aggregate = _LOG()
    app.save(aggregate)

    def write(i: int) -> None:
        aggregate.record(payload(i))
        app.save(aggregate)

    return write, lambda: None


def langgraph_writer(path: Path, durability: str, name: str) -> tuple[Callable[[int], None], Callable[[], None]]:
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, check_same_thread=False, timeout=30)
    saver = SqliteSaver(conn)
    saver.setup()
    conn.execute(f"PRAGMA synchronous = {_synchronous(durability)}")
    config: dict[str, Any] = {"configurable": {"thread_id": name, "checkpoint_ns": ""}}

    def write(i: int) -> None:
        nonlocal config
        checkpoint = empty_checkpoint()
        checkpoint["id"] = str(uuid.uuid4())
        checkpoint["channel_values"] = {"payload": payload(i)}
        config = saver.put(config, checkpoint, {"source": "loop", "step": i}, {})  # type: ignore[arg-type]

    return write, conn.close


def toka_writer(root: Path, durability: str, name: str) -> tuple[Callable[[int], None], Callable[[], None]]:
    client = Client(Paths(root, root, root / "run"), autostart=False)

    def write(i: int) -> None:
        client.call("events.append", events=[event_dict(name, i)])

    return write, client.close


def pipelined_rate(root: Path, name: str, first: int, count: int) -> float:
    """One event per request, up to PIPELINE requests unanswered; every answer read by the end."""
    client = Client(Paths(root, root, root / "run"), autostart=False)
    pending: list[int] = []
    start = time.perf_counter()
    for i in range(first, first + count):
        pending.append(client.submit("events.append", events=[event_dict(name, i)]))
        if len(pending) >= PIPELINE:
            client.result(pending.pop(0))
    for request_id in pending:
        client.result(request_id)
    rate = count / (time.perf_counter() - start)
    client.close()
    return rate


WRITER = {"toka": toka_writer, "eventsourcing": eventsourcing_writer, "langgraph": langgraph_writer}


# --------------------------------------------------------------------------------------------
# Runs


def _worker(peer: str, target: str, durability: str, index: int, count: int, barrier: Any, results: Any) -> None:
    write, close = WRITER[peer](Path(target), durability, f"writer-{index}")
    write(0)  # warm: opens, sets up, creates the aggregate
    barrier.wait()
    start = time.perf_counter()
    for i in range(1, count + 1):
        write(i)
    end = time.perf_counter()
    close()
    results.put((start, end, count))


def concurrent_rate(peer: str, target: Path, durability: str, per_writer: int) -> float:
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(WRITERS), ctx.Queue()
    workers = [
        ctx.Process(target=_worker, args=(peer, str(target), durability, i, per_writer, barrier, results))
        for i in range(WRITERS)
    ]
    for worker in workers:
        worker.start()
    done = [results.get(timeout=900) for _ in workers]
    for worker in workers:
        worker.join()
    return sum(d[2] for d in done) / (max(d[1] for d in done) - min(d[0] for d in done))


def sequential_rate(write: Callable[[int], None], first: int, count: int) -> float:
    start = time.perf_counter()
    for i in range(first, first + count):
        write(i)
    return count / (time.perf_counter() - start)


def run(durability: str, sequential: int, per_writer: int, rounds: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="tkpeer", dir="/tmp"))
    rates: dict[str, dict[str, list[float]]] = {
        w: {p: [] for p in PEERS} for w in ("sequential", "pipelined", "concurrent")
    }
    loads: list[float] = []
    settings = {"TOKA_DURABILITY": durability}
    try:
        home = Home(work, "seq", embeddings=False)
        with DaemonProcess(home, settings=settings):
            writers = {
                "toka": toka_writer(home.root, durability, "seq"),
                "eventsourcing": eventsourcing_writer(work / "es-seq.db", durability, "seq"),
                "langgraph": langgraph_writer(work / "lg-seq.db", durability, "seq"),
            }
            for write, _ in writers.values():
                sequential_rate(write, 0, 200)  # warm-up
            for r in range(rounds):
                loads.append(round(os.getloadavg()[0], 2))
                log(f"{durability}: sequential round {r + 1}/{rounds} (load {loads[-1]})")
                for peer, (write, _) in writers.items():
                    rates["sequential"][peer].append(sequential_rate(write, 1_000 + r * sequential, sequential))
                # The pipelined writer against the peers' sequential rates of this round.
                first = 1_000_000 + r * sequential
                rates["pipelined"]["toka"].append(pipelined_rate(home.root, "seq-pipelined", first, sequential))
                for peer in PEERS[1:]:
                    rates["pipelined"][peer].append(rates["sequential"][peer][-1])
            for _, close in writers.values():
                close()
        for r in range(rounds):
            loads.append(round(os.getloadavg()[0], 2))
            log(f"{durability}: {WRITERS} writers, round {r + 1}/{rounds} (load {loads[-1]})")
            for peer in PEERS:
                if peer == "toka":
                    home = Home(work, f"conc{r}", embeddings=False)
                    with DaemonProcess(home, settings=settings):
                        rates["concurrent"][peer].append(concurrent_rate(peer, home.root, durability, per_writer))
                else:
                    target = work / f"{peer}-conc{r}.db"
                    rates["concurrent"][peer].append(concurrent_rate(peer, target, durability, per_writer))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result: dict[str, Any] = {"durability": durability, "loads": loads}
    for workload, by_peer in rates.items():
        row: dict[str, Any] = {"rates": {p: statistics.median(v) for p, v in by_peer.items()}, "rounds": by_peer}
        for peer in PEERS[1:]:
            row[f"vs_{peer}"] = statistics.median(t / p for t, p in zip(by_peer["toka"], by_peer[peer], strict=True))
        result[workload] = row
    return result


def _verdict(ratio: float, target: float | None) -> str:
    return "" if target is None else " (PASS)" if ratio >= target else " (SHORT)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer events and rounds")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--durability", choices=("normal", "full", "both"), default="both")
    options = parser.parse_args()
    sequential, per_writer, rounds = (500, 250, 3) if options.quick else (2_000, 1_000, 5)
    chosen = ("normal", "full") if options.durability == "both" else (options.durability,)
    results = [run(d, sequential, per_writer, rounds) for d in chosen]
    if options.json:
        print(json.dumps({"machine": machine(), "results": results}, indent=2))
        return
    for result in results:
        loads = result["loads"]
        print(f"durability {result['durability']} (load {min(loads)}–{max(loads)}):")
        for workload in ("sequential", "pipelined", "concurrent"):
            row = result[workload]
            target = TARGETS[(workload, result["durability"])]
            rates = ", ".join(f"{p} {r:,.0f} ev/s" for p, r in row["rates"].items())
            ratios = ", ".join(f"{row[f'vs_{p}']:.2f}× {p}{_verdict(row[f'vs_{p}'], target)}" for p in PEERS[1:])
            label = {
                "sequential": "1 sequential writer",
                "pipelined": f"1 pipelined writer ({PIPELINE} in flight)",
                "concurrent": f"{WRITERS} writers",
            }[workload]
            aim = "no target" if target is None else f"target ≥ {target:g}×"
            print(f"  {label}: {rates}; toka {ratios}; {aim}")


if __name__ == "__main__":
    main()
