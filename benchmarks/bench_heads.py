"""What the Merkle tree and the signed heads cost (docs/tamper-evidence.md), as ratios against the
same work without them, measured in the same run.

    .venv/bin/python benchmarks/bench_heads.py [--events N] [--verify-events N] [--json]

- ingest: the same events appended to a fresh SQLite log, 100 per transaction (the size of a
  busy group commit) and 1 per transaction (a lone hook), with the tree kept
  (``SqliteStore.open(merkle=True)``) and without. Each side runs three times, alternating;
  the best of each is kept. The cost per append is the difference over the time without; on a
  busy machine two runs differ by more than the tree costs, so the time spent growing the tree
  inside the run with it is also reported as its share of that run (the steadier figure).
- signing: one head (Ed25519 signature, a line appended to a file), without and with the record
  of what the key signed rewritten beside it (heads.signed); at most one is signed a
  second (the default interval), so its share of a second is its cost.
- verify on a log of ``--verify-events`` events (1M by default): the check of the whole log
  against a signed head (``check_tree``: every leaf read and hashed, the stored tree read and
  compared), against the chain check of the same log (``verify``) as reference.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from store.events import NewEvent
from store.merkle import SignedRoot
from store.sqlite import append as sqlite_append
from store.sqlite.store import SqliteStore

T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z


def events(count: int, first: int = 0) -> list[NewEvent]:
    return [
        NewEvent(f"s{n % 50}", "tool.result", {"text": f"output {n} of a tool, word{n % 997}", "n": n}, None, T0 + n)
        for n in range(first, first + count)
    ]


class TreeClock:
    """Time spent growing the tree (store/sqlite/tree.py's ``grow``) inside the appends: its
    share of the same run's ingest does not move with the machine's load as two runs may."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._grow = sqlite_append.grow

    def __enter__(self) -> TreeClock:
        def timed(*args: Any) -> Any:
            start = time.perf_counter()
            try:
                return self._grow(*args)
            finally:
                self.seconds += time.perf_counter() - start

        sqlite_append.grow = timed  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        sqlite_append.grow = self._grow  # type: ignore[assignment]


async def ingest(path: Path, batch: int, total: int, merkle: bool) -> float:
    """Seconds to append ``total`` events ``batch`` at a time to a fresh log at ``path``."""
    for suffix in ("", "-wal", "-shm", "-tip", "-damaged"):  # the tip would say the new log lost the old
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    store = await SqliteStore.open(path, merkle=merkle)
    todo = [events(batch, n) for n in range(0, total, batch)]
    try:
        start = time.perf_counter()
        for chunk in todo:
            await store.append(chunk)
        return time.perf_counter() - start
    finally:
        await store.close()


def signing_seconds(heads: int = 2000, history: bool = False) -> float:
    """Seconds one head takes: the signature, and its line appended to a file; with ``history``,
    also the record of what the key signed rewritten beside it, as the daemon does."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from daemon.heads.history import History, write_history
    from daemon.heads.record import SignedHead, append_head, signed_bytes

    key = Ed25519PrivateKey.generate()
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "heads.jsonl"
        start = time.perf_counter()
        for n in range(heads):
            root = f"{n:064x}"
            signature = key.sign(signed_bytes(n, root, "2026-01-01T00:00:00.000000Z")).hex()
            append_head(target, SignedHead(n, root, "2026-01-01T00:00:00.000000Z", "00" * 32, signature), sync=False)
            if history:
                write_history(target.with_name("heads.signed"), History("00" * 32, n, root), sync=False)
        return (time.perf_counter() - start) / heads


async def verify_cost(path: Path, total: int) -> dict[str, float]:
    store = await SqliteStore.open(path)
    try:
        step = 10_000
        for n in range(0, total, step):
            await store.append(events(min(step, total - n), n))
            print(f"  built {n + step} of {total}", file=sys.stderr, end="\r")
        print(file=sys.stderr)
        frontier = await store.tree()
        assert frontier is not None
        head = SignedRoot(frontier.size, frontier.root(), "the head")
        start = time.perf_counter()
        report = await store.verify()
        chain = time.perf_counter() - start
        assert report.ok
        start = time.perf_counter()
        checked = await store.check_tree([head])
        tree = time.perf_counter() - start
        assert checked is not None and checked.problem_count == 0
        return {"events": total, "chain_s": round(chain, 2), "tree_s": round(tree, 2), "tree_over_chain": tree / chain}
    finally:
        await store.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100_000, help="events per ingest run (batched)")
    parser.add_argument("--verify-events", type=int, default=1_000_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="tkbh", dir="/tmp") as folder:
        path = Path(folder) / "toka.db"
        for label, batch, total in (("batched", 100, args.events), ("single", 1, args.events // 5)):
            best = {True: float("inf"), False: float("inf")}
            share = 1.0
            for _ in range(3):
                best[False] = min(best[False], await ingest(path, batch, total, False))
                with TreeClock() as tree:
                    took = await ingest(path, batch, total, True)
                best[True] = min(best[True], took)
                share = min(share, tree.seconds / took)
            print(f"  ingest {label}: without {best[False]:.2f}s, with {best[True]:.2f}s", file=sys.stderr)
            results[f"ingest_{label}"] = {
                "events": total,
                "events_per_s_without": round(total / best[False]),
                "events_per_s_with": round(total / best[True]),
                "cost": best[True] / best[False] - 1,
                "us_per_event": (best[True] - best[False]) / total * 1e6,
                "tree_share": share,
            }
        # At most one head a second (the default interval): its share of a second of ingest.
        sign, recorded = signing_seconds(), signing_seconds(history=True)
        results["signing"] = {
            "us_per_head": sign * 1e6,
            "us_per_head_recorded": recorded * 1e6,
            "share_of_a_second": recorded,
        }
        shutil.rmtree(folder, ignore_errors=True)
        Path(folder).mkdir(exist_ok=True)
        results["verify"] = await verify_cost(path, args.verify_events)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name in ("ingest_batched", "ingest_single"):
        row = results[name]
        print(
            f"{name}: {row['events_per_s_without']} ev/s without the tree, {row['events_per_s_with']} with:"
            f" {row['cost']:+.1%} ({row['us_per_event']:.1f} us per event); growing the tree took"
            f" {row['tree_share']:.1%} of the ingest with it"
        )
    signing = results["signing"]
    print(
        f"signing: {signing['us_per_head']:.0f} us a head, {signing['us_per_head_recorded']:.0f} us with heads.signed"
        f" rewritten; one a second: {signing['share_of_a_second']:.3%}"
    )
    verify = results["verify"]
    print(
        f"verify of {verify['events']} events: chain {verify['chain_s']}s, against the signed head"
        f" {verify['tree_s']}s ({verify['tree_over_chain']:.0%} of the chain check)"
    )


if __name__ == "__main__":
    asyncio.run(main())
