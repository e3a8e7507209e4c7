"""Pages written and CPU spent per one-event commit, in process, through the SQLite store.

The store is opened on a fresh database; ``--warm`` single-event appends of the foundation's events
over 20 sessions go first, unmeasured, then ``--events`` measured for CPU (the process's, every
thread's) and as many again for pages. Each append is a lone one, as the daemon makes it when
nothing else is queued (committed on the caller's thread), and commits the log alone (the derived tables
follow, applied once at the end and measured apart). Pages are WAL frames, read from the WAL
index's header (``mxFrame``, in the ``-shm`` file) after each commit, so a WAL that starts over
is still counted. The reference, in the same run: raw ``sqlite3`` committing the same events'
log rows (bench_foundation.py's L: the rows as toka writes them, sealed beforehand) one per
transaction, into a database of toka's schema.

Run ``python benchmarks/bench_commit_pages.py`` (``--events N``, ``--warm N``, ``--json``); to
compare two trees, run it under each with ``PYTHONPATH`` set to the tree.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_foundation import new_event, raw_insert, raw_schema, sealed_rows  # noqa: E402

from store.sqlite.store import SqliteStore  # noqa: E402

SESSIONS = 20


class Frames:
    """WAL frames written to a database since the last look: ``mxFrame`` of the WAL index's
    header (offset 16 of the ``-shm`` file), which starts again from 0 when the WAL does."""

    def __init__(self, path: Path) -> None:
        self._shm = os.open(f"{path}-shm", os.O_RDONLY)
        self._last = self._now()
        self.total = 0

    def _now(self) -> int:
        return int.from_bytes(os.pread(self._shm, 4, 16), sys.byteorder)

    def look(self) -> None:
        now = self._now()
        self.total += now - self._last if now >= self._last else now
        self._last = now

    def close(self) -> None:
        os.close(self._shm)


async def through_store(path: Path, warm: int, events: int) -> dict[str, float]:
    store = await SqliteStore.open(path)
    try:
        for i in range(warm):
            await store.append([new_event(f"s{i % SESSIONS}", i)], alone=True)
        await store.project()
        cpu = time.process_time()
        for i in range(warm, warm + events):
            await store.append([new_event(f"s{i % SESSIONS}", i)], alone=True)
        cpu = time.process_time() - cpu
        await store.project()
        frames = Frames(path)
        for i in range(warm + events, warm + 2 * events):
            await store.append([new_event(f"s{i % SESSIONS}", i)], alone=True)
            frames.look()
        commits = frames.total
        projecting = time.process_time()
        await store.project()
        projecting = time.process_time() - projecting
        frames.look()
        frames.close()
    finally:
        await store.close()
    return {
        "frames_per_commit": commits / events,
        "cpu_us_per_append": cpu * 1e6 / events,
        "projection_frames": frames.total - commits,
        "projection_cpu_us_per_event": projecting * 1e6 / events,
    }


def raw(path: Path, warm: int, events: int) -> dict[str, float]:
    db = raw_schema(path)
    raw_insert(db, sealed_rows("warm", 0, warm, 1), 1)
    rows = sealed_rows("measured", 0, 2 * events, warm + 1)
    cpu = time.process_time()
    raw_insert(db, rows[:events], 1)
    cpu = time.process_time() - cpu
    frames = Frames(path)
    for row in rows[events:]:
        raw_insert(db, [row], 1)
        frames.look()
    frames.close()
    db.close()
    return {"frames_per_commit": frames.total / events, "cpu_us_per_append": cpu * 1e6 / events}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--warm", type=int, default=2000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tkpages", dir="/tmp"))
    try:
        result: dict[str, Any] = {
            "store": asyncio.run(through_store(work / "store.db", args.warm, args.events)),
            "raw": raw(work / "raw.db", args.warm, args.events),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    store, reference = result["store"], result["raw"]
    print(
        f"store: {store['frames_per_commit']:.2f} pages and {store['cpu_us_per_append']:.0f} µs of CPU per one-event"
        f" commit; applying them after: {store['projection_frames']:.0f} pages in all,"
        f" {store['projection_cpu_us_per_event']:.0f} µs an event"
    )
    print(
        f"raw sqlite3, the same log rows: {reference['frames_per_commit']:.2f} pages and"
        f" {reference['cpu_us_per_append']:.0f} µs per commit"
    )


if __name__ == "__main__":
    main()
