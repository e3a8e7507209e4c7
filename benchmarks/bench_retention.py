"""Pruning and gc on a 100k-event log, against raw SQLite deleting the same rows, in one run.

    .venv/bin/python benchmarks/bench_retention.py [--sessions N] [--events-per-session N] [--json]

The log: N sessions of M message events each, one an hour apart, each with its own words (so
every event has search text) and an idempotency key; the first half of each session is older
than the cut-off. Built once with ``SqliteStore.append``, then copied, so both sides start from
the same file. Measured:

- prune: ``SqliteStore.prune`` over every session (checkpoint, tombstones, search index,
  session tables, one transaction per session), against a plain sqlite3 connection deleting
  the same events, their search text and their index entries, one transaction per session:
  the least any prune must do. Reported as events pruned per second and the ratio of times.
- gc: ``SqliteStore.collect_garbage`` deleting the payloads left behind, against the bare
  ``DELETE FROM blobs WHERE digest NOT IN (SELECT digest FROM events)`` on the raw copy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from store.events import NewEvent
from store.sqlite.store import SqliteStore

HOUR = 3_600_000_000
T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z


async def build(path: Path, sessions: int, per_session: int) -> None:
    store = await SqliteStore.open(path)
    try:
        for s in range(sessions):
            batch = [
                NewEvent(
                    f"s{s:04d}",
                    "message",
                    {"text": f"event {n} of session {s} word{s}x{n}"},
                    None,
                    T0 + n * HOUR,
                    key=f"k{n}",
                )
                for n in range(per_session)
            ]
            await store.append(batch)
    finally:
        await store.close()


async def toka_prune(path: Path, sessions: int, cutoff: int) -> tuple[float, int, float, int]:
    store = await SqliteStore.open(path)
    try:
        start = time.perf_counter()
        pruned = 0
        for s in range(sessions):
            done = await store.prune(f"s{s:04d}", cutoff)
            pruned += done.events if done else 0
        prune_s = time.perf_counter() - start
        start = time.perf_counter()
        collected = await store.collect_garbage()
        gc_s = time.perf_counter() - start
        assert (await store.verify()).ok
        return prune_s, pruned, gc_s, collected.blobs
    finally:
        await store.close()


def raw_prune(path: Path, sessions: int, cutoff: int) -> tuple[float, int, float, int]:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    try:
        start = time.perf_counter()
        pruned = 0
        for s in range(sessions):
            db.execute("BEGIN IMMEDIATE")
            seqs = [
                r[0] for r in db.execute("SELECT seq FROM events WHERE session = ? AND ts < ?", (f"s{s:04d}", cutoff))
            ]
            marks = ",".join("?" * len(seqs))
            texts = db.execute(f"SELECT seq, text FROM search_text WHERE seq IN ({marks})", seqs).fetchall()
            db.executemany("INSERT INTO search_index (search_index, rowid, text) VALUES ('delete', ?, ?)", texts)
            db.execute(f"DELETE FROM search_text WHERE seq IN ({marks})", seqs)
            db.execute(f"DELETE FROM events WHERE seq IN ({marks})", seqs)
            db.execute("COMMIT")
            pruned += len(seqs)
        prune_s = time.perf_counter() - start
        start = time.perf_counter()
        blobs = db.execute("DELETE FROM blobs WHERE digest NOT IN (SELECT digest FROM events)").rowcount
        gc_s = time.perf_counter() - start
        return prune_s, pruned, gc_s, blobs
    finally:
        db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--events-per-session", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cutoff = T0 + args.events_per_session // 2 * HOUR
    with tempfile.TemporaryDirectory(prefix="toka-bench-retention-") as tmp:
        built = Path(tmp) / "built.db"
        print(f"building {args.sessions * args.events_per_session:,} events", file=sys.stderr)
        asyncio.run(build(built, args.sessions, args.events_per_session))
        results: dict[str, Any] = {}
        for name in ("raw", "toka"):
            path = Path(tmp) / f"{name}.db"
            shutil.copy(built, path)
            if name == "raw":
                figures = raw_prune(path, args.sessions, cutoff)
            else:
                figures = asyncio.run(toka_prune(path, args.sessions, cutoff))
            prune_s, pruned, gc_s, blobs = figures
            results[name] = {"prune_s": prune_s, "pruned": pruned, "gc_s": gc_s, "blobs": blobs}
    toka, raw = results["toka"], results["raw"]
    assert toka["pruned"] == raw["pruned"] and toka["blobs"] == raw["blobs"], results
    summary = {
        "events": args.sessions * args.events_per_session,
        "pruned": toka["pruned"],
        "toka_prune_events_per_s": round(toka["pruned"] / toka["prune_s"]),
        "raw_prune_events_per_s": round(raw["pruned"] / raw["prune_s"]),
        "prune_time_ratio": round(toka["prune_s"] / raw["prune_s"], 2),
        "gc_blobs": toka["blobs"],
        "toka_gc_s": round(toka["gc_s"], 3),
        "raw_gc_s": round(raw["gc_s"], 3),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(f"pruned {summary['pruned']:,} of {summary['events']:,} events in {args.sessions} sessions")
    print(
        f"prune: toka {summary['toka_prune_events_per_s']:,} events/s, raw SQLite"
        f" {summary['raw_prune_events_per_s']:,} events/s: {summary['prune_time_ratio']}x the time"
    )
    print(f"gc: {summary['gc_blobs']:,} payloads, toka {summary['toka_gc_s']} s, raw {summary['raw_gc_s']} s")


if __name__ == "__main__":
    main()
