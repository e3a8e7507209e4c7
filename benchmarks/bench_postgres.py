"""The PostgreSQL backend against raw psycopg, and two daemons on one database.

Starts a throw-away PostgreSQL server with its default durability (fsync and synchronous
commits on; tests/postgres_server.py, the same code the test suite uses, from the installed
binaries), then measures, alternating the repetitions so that drift hits each side alike:

The server's ``synchronous_commit`` is ``on`` (its default) unless ``--synchronous-commit off``,
for toka and the reference alike.

- **Batched ingest**: one client sending the foundation's 232-byte tool-call events 100 per
  request to a daemon on PostgreSQL, against **P**, raw psycopg inserting the same rows (blobs and
  events, as toka seals them, into toka's own tables and indexes) 100 per transaction. Toka on
  SQLite at ``durability = "full"`` (an fsync per commit, as PostgreSQL does) is reported beside.
- **8 clients**, one event per request, against P, as the foundation measures SQLite; and the
  same 8 clients against a daemon on SQLite at ``durability = "full"``.
- **Across daemons**: daemon A appends one event at a time; a subscriber on daemon B (another
  TOKA_HOME, as on another machine) receives it. p50 and p99 from the append being sent to the
  event arriving at B.

    .venv/bin/python benchmarks/bench_postgres.py [--events N] [--reps N] [--samples N] [--json]

One event per transaction, one writer and eight, against raw psycopg doing the same, is
bench_postgres_writers.py's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import postgres_server  # noqa: E402
import psycopg  # noqa: E402
from bench_foundation import (  # noqa: E402
    BATCH,
    CLIENTS,
    DaemonProcess,
    Home,
    _concurrent_worker,
    event_dict,
    log,
    machine,
    percentile,
    sealed_rows,
)

from daemon.client.sync import Client  # noqa: E402
from store.errors import DaemonUnavailable  # noqa: E402
from store.postgres.store import PostgresStore  # noqa: E402


def fresh_database(admin: str, name: str) -> str:
    """A new database with toka's schema (made by toka's migrations), empty."""
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    url = postgres_server.with_dbname(admin, name)

    async def migrate() -> None:
        store = await PostgresStore.open(url)
        await store.close()

    asyncio.run(migrate())
    return url


def postgres_settings(url: str) -> dict[str, str]:
    return {"TOKA_BACKEND": "postgres", "TOKA_STORE_URL": url}


def raw_ingest(admin: str, events: int, rep: int) -> float:
    """P: events/s of psycopg inserting toka's rows 100 per transaction, after a warm-up, the way
    one would by hand for speed: one multi-row statement per table, columns as binary arrays."""
    url = fresh_database(admin, f"raw{rep}")
    warmup, timed = sealed_rows("warmup", 0, 1_000, 1), sealed_rows("ingest", 0, events, 1_001)
    with psycopg.connect(url) as conn:
        for rows in (warmup, timed):
            start = time.perf_counter()
            for first in range(0, len(rows), BATCH):
                chunk = rows[first : first + BATCH]
                with conn.transaction():
                    conn.execute(
                        "INSERT INTO blobs SELECT * FROM unnest(%b::text[], %b::bigint[], %b::smallint[], %b::bytea[])"
                        " ON CONFLICT DO NOTHING",
                        [list(column) for column in zip(*(row.blob for row in chunk), strict=True)],
                    )
                    conn.execute(
                        "INSERT INTO events SELECT * FROM unnest(%b::bigint[], %b::text[], %b::text[], %b::text[],"
                        " %b::text[], %b::bigint[], %b::text[], %b::text[], %b::text[])",
                        [list(column) for column in zip(*(row.event for row in chunk), strict=True)],
                    )
            elapsed = time.perf_counter() - start
    return events / elapsed


def daemon_ingest(work: Path, name: str, settings: dict[str, str], events: int) -> float:
    """Events/s of one client sending batches of 100 to a fresh daemon."""
    home = Home(work, name)
    warm = [event_dict("warmup", i) for i in range(1_000)]
    batch = [event_dict("ingest", i) for i in range(events)]
    with DaemonProcess(home, settings=settings) as daemon, daemon.client() as client:
        for first in range(0, len(warm), BATCH):
            client.call("events.append", events=warm[first : first + BATCH])
        start = time.perf_counter()
        for first in range(0, len(batch), BATCH):
            client.call("events.append", events=batch[first : first + BATCH])
        elapsed = time.perf_counter() - start
    shutil.rmtree(home.root, ignore_errors=True)
    return events / elapsed


def concurrent(work: Path, name: str, settings: dict[str, str], per_client: int) -> float:
    """Aggregate events/s of CLIENTS processes appending one event per request."""
    home = Home(work, name)
    ctx = mp.get_context("spawn")
    with DaemonProcess(home, settings=settings):
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


def across_daemons(work: Path, url: str, samples: int) -> list[float]:
    """Seconds from an append sent to daemon A to its arrival at a subscriber of daemon B."""
    settings = postgres_settings(url)
    arrived: dict[str, float] = {}
    ready, stop = threading.Event(), threading.Event()
    with DaemonProcess(Home(work, "a"), settings=settings) as a, DaemonProcess(Home(work, "b"), settings=settings) as b:

        def subscribe() -> None:
            with Client(b.home.paths, autostart=False, timeout=None) as client:
                stream = client.subscribe(session="latency")
                ready.set()
                with contextlib.suppress(DaemonUnavailable):  # the stream ends when the daemons stop
                    for event in stream:
                        arrived[event["key"]] = time.perf_counter()
                        if stop.is_set():
                            return

        threading.Thread(target=subscribe, daemon=True).start()
        ready.wait(30)
        sent: dict[str, float] = {}
        with a.client() as client:
            client.call("events.append", events=[{"session": "latency", "kind": "note.user", "payload": {}}])
            for i in range(samples):
                key = f"k{i}"
                sent[key] = time.perf_counter()
                client.call("events.append", events=[{**event_dict("latency", i), "key": key}])
                deadline = time.monotonic() + 10
                while key not in arrived and time.monotonic() < deadline:
                    time.sleep(0.0005)
                time.sleep(0.01)
        stop.set()
    return [arrived[k] - sent[k] for k in sent if k in arrived]


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def run(events: int, reps: int, samples: int, synchronous_commit: str) -> dict[str, Any]:
    server = postgres_server.start(durable=True)
    with psycopg.connect(server.url, autocommit=True) as conn:  # for every side alike
        conn.execute(f"ALTER SYSTEM SET synchronous_commit = {synchronous_commit}")
        conn.execute("SELECT pg_reload_conf()")
    work = Path(tempfile.mkdtemp(prefix="tkpg", dir="/tmp"))
    try:
        raw, toka_pg, toka_sqlite_full, eight_pg, eight_sqlite = [], [], [], [], []
        for rep in range(reps):
            log(f"rep {rep + 1}/{reps}: raw psycopg")
            raw.append(raw_ingest(server.url, events, rep))
            log(f"rep {rep + 1}/{reps}: daemon on PostgreSQL")
            url = fresh_database(server.url, f"toka{rep}")
            toka_pg.append(daemon_ingest(work, f"pg{rep}", postgres_settings(url), events))
            log(f"rep {rep + 1}/{reps}: daemon on SQLite, durability full")
            toka_sqlite_full.append(daemon_ingest(work, f"sq{rep}", {"TOKA_DURABILITY": "full"}, events))
            log(f"rep {rep + 1}/{reps}: 8 clients on PostgreSQL")
            url = fresh_database(server.url, f"eight{rep}")
            eight_pg.append(concurrent(work, f"c{rep}", postgres_settings(url), max(50, events // 40)))
            log(f"rep {rep + 1}/{reps}: 8 clients on SQLite, durability full")
            eight_sqlite.append(concurrent(work, f"s{rep}", {"TOKA_DURABILITY": "full"}, max(50, events // 40)))
        log("across daemons")
        latency = across_daemons(work, fresh_database(server.url, "latency"), samples)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        postgres_server.stop(server)
    p = median(raw)
    return {
        "machine": machine(),
        "events": events,
        "reps": reps,
        "synchronous_commit": synchronous_commit,
        "raw_psycopg_ev_s": raw,
        "daemon_postgres_ev_s": toka_pg,
        "daemon_sqlite_full_ev_s": toka_sqlite_full,
        "eight_clients_postgres_ev_s": eight_pg,
        "eight_clients_sqlite_full_ev_s": eight_sqlite,
        "batched_ratio": median(toka_pg) / p,
        "eight_clients_ratio": median(eight_pg) / p,
        "postgres_vs_sqlite_full": median(toka_pg) / median(toka_sqlite_full),
        "across_daemons_ms": {
            "n": len(latency),
            "of": samples,
            "p50": percentile(latency, 50) * 1000 if latency else None,
            "p99": percentile(latency, 99) * 1000 if latency else None,
            "max": max(latency) * 1000 if latency else None,
        },
        "targets": {"batched_ratio": 0.7, "eight_clients_ratio": 0.25, "across_daemons_p50_ms": 20},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument(
        "--synchronous-commit", choices=("on", "off"), default="on", help="the server's setting, for every side"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.events, args.reps, args.samples, args.synchronous_commit)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"raw psycopg (P), 100/transaction: {median(result['raw_psycopg_ev_s']):,.0f} ev/s")
    print(
        f"daemon on PostgreSQL, 100/request: {median(result['daemon_postgres_ev_s']):,.0f} ev/s"
        f" = {result['batched_ratio']:.0%} of P (target >= 70%)"
    )
    print(
        f"8 clients, 1 event/request: {median(result['eight_clients_postgres_ev_s']):,.0f} ev/s"
        f" = {result['eight_clients_ratio']:.0%} of P (target >= 25%)"
    )
    print(
        f"daemon on SQLite, durability full: {median(result['daemon_sqlite_full_ev_s']):,.0f} ev/s"
        f" (PostgreSQL is {result['postgres_vs_sqlite_full']:.2f}x of it)"
    )
    latency = result["across_daemons_ms"]
    print(
        f"across daemons: p50 {latency['p50']:.1f} ms, p99 {latency['p99']:.1f} ms,"
        f" {latency['n']}/{latency['of']} arrived (target p50 <= 20 ms)"
    )


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
