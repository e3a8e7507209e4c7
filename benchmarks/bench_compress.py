"""Compression benchmark: extractive compression (policy summarize, to 37.5% of the session's
estimated size) of the largest Claude Code fixture session, against reading those events back
through the client.

The daemon compresses events it has just read, so the cost is measured against the read: the
reference R is ``Client.iter_events`` of the session from a real daemon (a fresh TOKA_HOME, the
transcript imported beforehand), in the same run on the same machine. Measured against R:

- ``compress()`` as the daemon calls it: the token estimator on every event, the cut, the handoff
  fold over the range and the fitted summary;
- the engine alone: the same call with the sizes estimated beforehand (a lookup per event), which
  separates the cost of the estimator from that of the compression (the summary, which is new,
  is still estimated).

The estimator is ``daemon.compress.tokens.event_tokens`` when that module exists, else (and with
``--simple``) a quarter of the length of the payload's JSON. Target: ``compress()`` at most 2× R.
The events are converted from the client's dicts to ``store.events.Event`` before the clock
starts (the daemon holds them so). Run ``python benchmarks/bench_compress.py`` (a few seconds;
needs ../shared/fixtures); ``--json`` prints the results as JSON, ``--file`` compresses another
transcript.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_foundation import DaemonProcess, Home, machine
from bench_handoff import as_event

from daemon.compress.engine import compress
from daemon.ingest.formats import PARSERS, detect
from daemon.ingest.lines import ParseStats
from store.events import Event

ROOT = Path(__file__).resolve().parent.parent
CLAUDE = ROOT.parent / "shared" / "fixtures" / "transcripts" / "claude"
REPS = 7
TARGET = 2.0
TARGET_SHARE = 0.375


def estimator(simple: bool) -> tuple[str, Callable[[Event], int]]:
    if simple:
        return "len(payload JSON) // 4", lambda event: len(json.dumps(event.payload)) // 4
    try:
        from daemon.compress.tokens import event_tokens
    except ImportError:
        return "len(payload JSON) // 4", lambda event: len(json.dumps(event.payload)) // 4
    return "daemon.compress.tokens.event_tokens", event_tokens


def largest_transcript() -> Path:
    files = sorted(CLAUDE.glob("*.jsonl"), key=lambda p: (p.stat().st_size, p.name))
    if not files:
        raise SystemExit(f"no transcripts under {CLAUDE}: the shared fixtures are not checked out beside the project")
    return files[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, default=None)
    parser.add_argument("--simple", action="store_true", help="estimate len(payload JSON) // 4 in any case")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    path = args.file or largest_transcript()
    fmt = detect(path)
    assert fmt is not None, f"{path}: not a transcript toka reads"
    dicts = list(PARSERS[fmt](path, ParseStats()))
    counts: dict[str, int] = {}
    for d in dicts:
        counts[d["session"]] = counts.get(d["session"], 0) + 1
    session = max(counts, key=lambda s: counts[s])
    name, tokens = estimator(args.simple)
    with (
        tempfile.TemporaryDirectory(prefix="toka-bc-", dir="/tmp") as tmp,
        DaemonProcess(Home(Path(tmp), "h")) as daemon,
    ):
        client = daemon.client()
        for start in range(0, len(dicts), 500):
            client.append(dicts[start : start + 500])
        read_times: list[float] = []
        events: list[Event] = []
        for _ in range(REPS):
            begin = time.perf_counter()
            rows = list(client.iter_events(session=session))
            read_times.append(time.perf_counter() - begin)
            events = [as_event(row) for row in rows]
        client.close()
    sizes = {e.seq: tokens(e) for e in events}
    total = sum(sizes.values())

    def known(event: Event) -> int:
        """The estimate made beforehand; the summary, which is new, is estimated."""
        size = sizes.get(event.seq) if event.seq else None
        return tokens(event) if size is None else size

    target = int(total * TARGET_SHARE)
    compress_times: list[float] = []
    engine_times: list[float] = []
    estimate_times: list[float] = []
    result: Any = None
    for _ in range(REPS):
        begin = time.perf_counter()
        result = compress(events, policy="summarize", target_tokens=target, tokens=tokens)
        compress_times.append(time.perf_counter() - begin)
        begin = time.perf_counter()
        compress(events, policy="summarize", target_tokens=target, tokens=known)
        engine_times.append(time.perf_counter() - begin)
        begin = time.perf_counter()
        for event in events:
            tokens(event)
        estimate_times.append(time.perf_counter() - begin)
    read, full, engine, estimate = (
        statistics.median(t) for t in (read_times, compress_times, engine_times, estimate_times)
    )
    results = {
        "machine": machine(),
        "transcript": path.name,
        "bytes": path.stat().st_size,
        "events": len(events),
        "estimator": name,
        "tokens_before": result.tokens_before,
        "target_tokens": target,
        "tokens_after": result.tokens_after,
        "summary_tokens": result.summary_tokens,
        "events_in_range": result.events_in_range,
        "read_ms": round(read * 1000, 2),
        "compress_ms": round(full * 1000, 2),
        "engine_ms": round(engine * 1000, 2),
        "estimator_ms": round(estimate * 1000, 2),
        "compress_ratio": round(full / read, 3),
        "engine_ratio": round(engine / read, 3),
        "target": TARGET,
        "pass": full / read <= TARGET,
    }
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"{path.name}: {len(events)} events, {results['bytes']:,} bytes, median of {REPS}")
        print(f"estimator: {name}; {result.tokens_before:,} tokens -> target {target:,} -> {result.tokens_after:,}")
        print(f"read through the client (R):     {results['read_ms']:8.2f} ms")
        ratio = results["compress_ratio"]
        print(f"compress (summarize, extractive): {results['compress_ms']:8.2f} ms  {ratio:.3f} x R")
        print(f"  engine alone (sizes known):     {results['engine_ms']:8.2f} ms  {results['engine_ratio']:.3f} x R")
        print(f"  estimator alone:                {results['estimator_ms']:8.2f} ms")
        print(f"target: compress <= {TARGET:.1f} x R: {'PASS' if results['pass'] else 'SHORT'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
