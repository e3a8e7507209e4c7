"""Full-text search over 100k indexed events, against raw FTS5 on the same index, in one run.

    .venv/bin/python benchmarks/bench_search.py [--events N] [--rounds N] [--json]

The log is generated: messages, tool calls and tool results whose words are drawn from a
Zipf-like vocabulary (rank r drawn with weight 1/r), so that some words appear in a handful of
events and others in thousands. Measured:

- search p50 through ``SqliteStore.search`` (20 hits, BM25 order, snippets, the events'
  columns) for rare words (in 5 to 50 events) and mid-frequency words (in 1% to 5% of them),
  against a plain sqlite3 connection running ``SELECT rowid FROM search_index WHERE
  search_index MATCH ? ORDER BY rank LIMIT 20`` on the same file; and against the store's own
  statement (the join, and the text each snippet is made from), to show what the store adds on
  top of its SQL: reading the query, and making the snippets in Python.
  Targets: ≤ 1.5× the raw statement and ≤ 1 ms.
- ingest: events per second through ``SqliteStore.append`` (batches of 500) with the index, and
  with the indexing step left out (what the append did before search), alternating in rounds.
  Target: ≥ 0.7×.
- repeated words: a query of one word written 1, 2, 8 and 64 times (64: the most a query holds)
  over 20 events of 32 KiB each holding nothing but that word, through the store (20 hits),
  against the statement the store ran before it read queries itself (FTS5's snippet(), the
  query as given: time in the square of the matches) for its first hit only, for 1 and 2
  repeats; and how long a 1 MiB query takes to be refused. Target: the store's time does not
  grow with the repeats.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import itertools
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from store.errors import UsageError
from store.events import NewEvent
from store.search import SearchQuery
from store.search_syntax import literal_query
from store.sqlite import projector as sqlite_projector
from store.sqlite.search import SEARCH_SELECT
from store.sqlite.store import SqliteStore

VOCABULARY = 50_000
BATCH = 500
SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "fe", "di", "bo", "ga", "hu"]


def word(rank: int) -> str:
    """A pronounceable, unique word for each rank (base-16 digits spelt as syllables)."""
    out = []
    rank += 16
    while rank:
        rank, digit = divmod(rank, 16)
        out.append(SYLLABLES[digit])
    return "".join(out)


def generate(count: int, seed: int = 7) -> tuple[list[NewEvent], Counter[str]]:
    rng = random.Random(seed)
    words = [word(r) for r in range(VOCABULARY)]
    cumulative = list(itertools.accumulate(1 / (r + 1) for r in range(VOCABULARY)))
    total = cumulative[-1]

    def text(n: int) -> list[str]:
        return [words[bisect.bisect_left(cumulative, rng.random() * total)] for _ in range(n)]

    events, frequency = [], Counter[str]()
    for index in range(count):
        chosen = text(rng.randint(12, 60))
        frequency.update(set(chosen))
        session = f"session-{index // 1000}"
        kind = ("message", "tool.call", "tool.result")[index % 3]
        if kind == "message":
            payload: dict[str, Any] = {"role": "assistant", "text": " ".join(chosen)}
        elif kind == "tool.call":
            payload = {"tool": "Bash", "input": {"command": " ".join(chosen[:8]), "description": " ".join(chosen[8:])}}
        else:
            payload = {"output": "\n".join(" ".join(chosen[i : i + 10]) for i in range(0, len(chosen), 10))}
        events.append(
            NewEvent(session=session, kind=kind, payload=payload, agent="main", ts=1_767_225_600_000_000 + index)
        )
    return events, frequency


def terms(frequency: Counter[str], low: int, high: int, how_many: int = 12) -> list[str]:
    """Up to ``how_many`` words that appear in ``low`` to ``high`` events (a fixed draw)."""
    chosen = sorted(w for w, n in frequency.items() if low <= n <= high)
    random.Random(3).shuffle(chosen)
    return sorted(chosen[:how_many])


async def ingest(path: Path, events: list[NewEvent], indexed: bool) -> float:
    """Events per second appending ``events`` into a fresh store at ``path``, the derived tables
    (the index among them, applied behind the appends: docs/storage.md) included."""
    original = sqlite_projector.index_events
    if not indexed:
        sqlite_projector.index_events = lambda db, events: None  # type: ignore[assignment]
    try:
        store = await SqliteStore.open(path)
        began = time.perf_counter()
        for start in range(0, len(events), BATCH):
            await store.append(events[start : start + BATCH])
        await store.project()
        elapsed = time.perf_counter() - began
        await store.close()
    finally:
        sqlite_projector.index_events = original
    return len(events) / elapsed


async def store_p50(store: SqliteStore, words: list[str], rounds: int) -> tuple[float, int]:
    times, hits = [], 0
    for _ in range(rounds):
        for term in words:
            began = time.perf_counter()
            found = await store.search(SearchQuery(term, limit=20))
            times.append(time.perf_counter() - began)
            hits += len(found)
    return statistics.median(times), hits


def raw_p50(path: Path, words: list[str], rounds: int, sql: str) -> float:
    db = sqlite3.connect(path)
    times = []
    for _ in range(rounds):
        for term in words:
            began = time.perf_counter()
            db.execute(sql, (term,)).fetchall()
            times.append(time.perf_counter() - began)
    db.close()
    return statistics.median(times)


RAW = "SELECT rowid FROM search_index WHERE search_index MATCH ? ORDER BY rank LIMIT 20"
RAW_EQUIVALENT = SEARCH_SELECT + " ORDER BY search_index.rank LIMIT 20"
# What the store ran before it made snippets itself: FTS5's snippet() over the query as given.
FTS5_SNIPPET = (
    "SELECT e.seq, -search_index.rank, snippet(search_index, 0, '«', '»', '…', 16) FROM search_index"
    " JOIN events e ON e.seq = search_index.rowid WHERE search_index MATCH ? ORDER BY search_index.rank LIMIT 1"
)


async def repeated(folder: Path, rounds: int) -> dict[str, Any]:
    """Queries of one word repeated, over events that hold nothing else (see the module's doc)."""
    path = folder / "repeated.db"
    store = await SqliteStore.open(path)
    text = ("word " * 7000)[: 32 * 1024]
    await store.append([NewEvent(session="r", kind="message", payload={"text": text}, agent="main") for _ in range(20)])
    figures: dict[str, Any] = {}
    try:
        for times in (1, 2, 8, 64):
            query = literal_query("word " * times)
            through_store = min([await timed(store, query) for _ in range(max(1, rounds // 5))])
            row: dict[str, Any] = {"store_ms": round(through_store * 1000, 1)}
            if times <= 2:  # one hit, not 20: 8 repeats would take minutes
                before = raw_p50(path, [" ".join(['"word"'] * times)], 1, FTS5_SNIPPET)
                row["fts5_snippet_1_hit_ms"] = round(before * 1000, 1)
            figures[f"x{times}"] = row
        began = time.perf_counter()
        try:
            await store.search(SearchQuery(literal_query("word " * 200_000)))
        except UsageError:
            figures["refused_1_mib_query_ms"] = round((time.perf_counter() - began) * 1000, 3)
    finally:
        await store.close()
    return figures


async def timed(store: SqliteStore, query: str) -> float:
    began = time.perf_counter()
    await store.search(SearchQuery(query, limit=20))
    return time.perf_counter() - began


async def run(count: int, rounds: int) -> dict[str, Any]:
    print(f"generating {count:,} events ...", file=sys.stderr)
    events, frequency = generate(count)
    rare = terms(frequency, 5, 50)
    mid = terms(frequency, count // 100, count // 20)
    with tempfile.TemporaryDirectory(prefix="tks", dir="/tmp") as tmp:
        folder = Path(tmp)
        print("ingesting with and without the index ...", file=sys.stderr)
        on, off = [], []
        for round_ in range(3):  # alternate, so both see the same machine
            on.append(await ingest(folder / f"on-{round_}.db", events, True))
            off.append(await ingest(folder / f"off-{round_}.db", events, False))
        path = folder / "on-0.db"
        store = await SqliteStore.open(path)
        try:
            figures: dict[str, Any] = {"events": count, "ingest": {}, "search": {}}
            figures["ingest"] = {
                "indexed_events_per_s": round(statistics.median(on)),
                "unindexed_events_per_s": round(statistics.median(off)),
                "ratio": round(statistics.median(on) / statistics.median(off), 3),
                "target": ">= 0.7",
            }
            for name, words in (("rare", rare), ("mid", mid)):
                df = [frequency[w] for w in words]
                await store_p50(store, words, 2)  # warm-up
                raw_p50(path, words, 2, RAW)
                raw = raw_p50(path, words, rounds, RAW)
                equivalent = raw_p50(path, words, rounds, RAW_EQUIVALENT)
                through_store, hits = await store_p50(store, words, rounds)
                figures["search"][name] = {
                    "terms": len(words),
                    "events_per_term": [min(df), max(df)],
                    "store_p50_ms": round(through_store * 1000, 3),
                    "raw_p50_ms": round(raw * 1000, 3),
                    "raw_store_statement_p50_ms": round(equivalent * 1000, 3),
                    "ratio_to_raw": round(through_store / raw, 2),
                    "ratio_to_raw_store_statement": round(through_store / equivalent, 2),
                    "targets": "<= 1.5x raw, <= 1 ms",
                }
        finally:
            await store.close()
        print("queries of repeated words ...", file=sys.stderr)
        figures["repeated"] = await repeated(folder, rounds)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = asyncio.run(run(args.events, args.rounds))
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    ingest_figures = figures["ingest"]
    print(f"{figures['events']:,} events")
    print(
        f"ingest: {ingest_figures['indexed_events_per_s']:,}/s indexed vs"
        f" {ingest_figures['unindexed_events_per_s']:,}/s without: {ingest_figures['ratio']}x (target >= 0.7)"
    )
    for name, row in figures["search"].items():
        low, high = row["events_per_term"]
        print(
            f"search {name} ({low}-{high} events per term): store p50 {row['store_p50_ms']} ms,"
            f" raw {row['raw_p50_ms']} ms ({row['ratio_to_raw']}x),"
            f" the store's statement raw {row['raw_store_statement_p50_ms']} ms"
            f" ({row['ratio_to_raw_store_statement']}x)"
        )
    for name, row in figures["repeated"].items():
        print(f"repeated words {name}: {row}")


if __name__ == "__main__":
    main()
