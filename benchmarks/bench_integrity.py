"""What the database's integrity costs, each figure against a reference measured in the same run.

    .venv/bin/python benchmarks/bench_integrity.py [--events N] [--appends N] [--json]

- the tip: appends of one event and of 100 events through ``SqliteStore.append``, with the tip
  rewritten after each commit (as shipped) against the same store with the tip's write skipped;
  the ratio of times (median of 5 alternating runs);
- opening: the comparison of the session tables with the log's last event that every open runs
  (store/projection.py), against ``SELECT count(*) FROM events`` on the same log (what a count
  of every event would cost), both on a warm cache;
- verify: ``check_database`` (SQLite's ``quick_check``, and ``integrity_check`` with deep) on a
  log of N events, against the chain's own verify of the same log;
- recover: ``store.sqlite.recover.recover`` of the same log, sound, against SQLite's own copy of
  it (``VACUUM INTO``), in events per second and the ratio of times.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

from store.events import NewEvent
from store.projection import AGREEMENT_SQL
from store.sqlite.recover import recover
from store.sqlite.store import SqliteStore

RUNS = 5


def event(n: int) -> NewEvent:
    return NewEvent(f"s{n % 20}", "tool.call", {"tool": "Read", "n": n, "input": {"file_path": f"src/f{n}.py"}})


async def appends(path: Path, count: int, size: int, tip: bool) -> float:
    store = await SqliteStore.open(path)
    if not tip:
        store._integrity.committed = lambda _: None  # type: ignore[method-assign]
    try:
        await store.append([event(n) for n in range(size)])  # warm up
        start = time.perf_counter()
        for n in range(0, count, size):
            await store.append([event(n + i) for i in range(size)])
        return time.perf_counter() - start
    finally:
        await store.close()


async def tip_cost(directory: Path, count: int, size: int) -> dict[str, Any]:
    times: dict[bool, list[float]] = {True: [], False: []}
    for run in range(RUNS):
        for tip in (run % 2 == 0, run % 2 == 1):
            path = directory / f"tip-{tip}-{run}.db"
            times[tip].append(await appends(path, count, size, tip))
            for leftover in directory.glob(path.name + "*"):
                leftover.unlink()
    with_tip, without = statistics.median(times[True]), statistics.median(times[False])
    return {
        "batch": size,
        "appends": count // size,
        "us_per_append": round(with_tip / (count // size) * 1e6, 1),
        "us_per_append_without_tip": round(without / (count // size) * 1e6, 1),
        "ratio": round(with_tip / without, 3),
    }


async def build(path: Path, events: int) -> None:
    store = await SqliteStore.open(path)
    try:
        for n in range(0, events, 5000):
            await store.append([event(n + i) for i in range(min(5000, events - n))])
    finally:
        await store.close()


def timed(work: Callable[[], object], runs: int = RUNS) -> float:
    work()  # warm: the pages in the cache
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def open_cost(path: Path) -> dict[str, Any]:
    with closing(sqlite3.connect(path)) as db:
        agreement = timed(lambda: db.execute(AGREEMENT_SQL).fetchone())
        count = timed(lambda: db.execute("SELECT count(*) FROM events").fetchone())
    return {
        "agreement_ms": round(agreement * 1e3, 3),
        "count_ms": round(count * 1e3, 2),
        "ratio": round(agreement / count, 4),
    }


async def verify_cost(path: Path) -> dict[str, Any]:
    store = await SqliteStore.open(path)
    try:
        found: dict[str, float] = {}
        for name, work in (
            ("chain", store.verify),
            ("quick_check", store.check_database),
            ("integrity_check", lambda: store.check_database(deep=True)),
        ):
            await work()  # warm
            start = time.perf_counter()
            await work()
            found[name] = time.perf_counter() - start
    finally:
        await store.close()
    return {
        "chain_s": round(found["chain"], 3),
        "quick_check_s": round(found["quick_check"], 3),
        "integrity_check_s": round(found["integrity_check"], 3),
        "quick_check_ratio": round(found["quick_check"] / found["chain"], 3),
        "integrity_check_ratio": round(found["integrity_check"] / found["chain"], 3),
    }


def recover_cost(path: Path, events: int) -> dict[str, Any]:
    copy = path.with_name("copy.db")
    start = time.perf_counter()
    with closing(sqlite3.connect(path)) as db:
        db.execute("VACUUM INTO ?", (str(copy),))
    reference = time.perf_counter() - start
    start = time.perf_counter()
    recovery = recover(path, sqlite3_shell=None)
    took = time.perf_counter() - start
    assert recovery.salvage.events == events and recovery.salvage.lost_seqs == 0
    return {
        "seconds": round(took, 2),
        "events_per_s": round(events / took),
        "vacuum_into_s": round(reference, 2),
        "ratio": round(took / reference, 2),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000, help="the log verify, open and recover read")
    parser.add_argument("--appends", type=int, default=4_000, help="events appended per timed run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tkbi", dir="/tmp") as workdir:
        directory = Path(workdir)
        print("timing appends with and without the tip ...", file=sys.stderr)
        tip = [await tip_cost(directory, args.appends, size) for size in (1, 100)]
        log = directory / "log" / "toka.db"
        log.parent.mkdir()
        print(f"building a log of {args.events:,} events ...", file=sys.stderr)
        await build(log, args.events)
        opening = open_cost(log)
        verifying = await verify_cost(log)
        recovering = recover_cost(log, args.events)
    results = {"events": args.events, "tip": tip, "open": opening, "verify": verifying, "recover": recovering}
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for row in tip:
        print(
            f"append of {row['batch']:>3} event(s): {row['us_per_append']} us with the tip,"
            f" {row['us_per_append_without_tip']} us without: {row['ratio']}x"
        )
    print(
        f"open's check of the tables: {opening['agreement_ms']} ms, count(*) {opening['count_ms']} ms"
        f" ({opening['ratio']}x), {args.events:,} events"
    )
    print(
        f"verify of {args.events:,} events: chain {verifying['chain_s']} s, quick_check {verifying['quick_check_s']} s"
        f" ({verifying['quick_check_ratio']}x), integrity_check {verifying['integrity_check_s']} s"
        f" ({verifying['integrity_check_ratio']}x)"
    )
    print(
        f"recover of {args.events:,} events: {recovering['seconds']} s, {recovering['events_per_s']:,} events/s;"
        f" VACUUM INTO {recovering['vacuum_into_s']} s ({recovering['ratio']}x)"
    )


if __name__ == "__main__":
    asyncio.run(main())
