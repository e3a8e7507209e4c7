"""`toka context` with a 100k-token budget on a ~2,000-event session, against reading the same
events back through the client, in the same run.

    .venv/bin/python benchmarks/bench_context.py [--rounds N] [--json]

The session is the largest Claude Code fixture of ../shared (2,041 events; its history does
not fit 100k tokens, so the context is fitted with the summarize policy, without storing
anything). The target is ≤ 3× the read-back. A context asked again comes from the memory pool,
so each round asks for a budget of its own (100,000 tokens and a few more): every round
assembles. Each round also asks for the context as recorded (``raw``), so that the cost of
redacting its messages is measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_foundation import DaemonProcess, Home, machine

from daemon.client.sync import Client
from daemon.client.transfer import import_files

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = (
    ROOT.parent / "shared" / "fixtures" / "transcripts" / "claude" / "marot__fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
)
SESSION = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"
TARGET = 3.0


def timed(fn: Any, rounds: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(rounds):
        began = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - began)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not FIXTURE.exists():
        raise SystemExit(f"{FIXTURE} is absent: the shared fixtures are not checked out beside the project")
    document: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="tkc", dir="/tmp") as tmp:
        home = Home(Path(tmp), "h")
        daemon = DaemonProcess(home)
        try:
            with Client(home.paths, autostart=False) as client:
                import_files(client, [FIXTURE])
                events = client.call("sessions.get", session=SESSION)["events"]
                read_back, _ = timed(lambda: list(client.iter_events(session=SESSION)), args.rounds)
                budgets = iter(range(100_000, 100_000 + 4 * args.rounds))  # never twice: no answer from the pool
                redacted_times: list[float] = []
                raw_times: list[float] = []
                for _ in range(args.rounds):  # alternating, so that a change of load moves both
                    for raw_text, times in ((False, redacted_times), (True, raw_times)):
                        began = time.perf_counter()
                        answer = client.call("context", session=SESSION, budget=next(budgets), raw=raw_text)
                        times.append(time.perf_counter() - began)
                        document = document if raw_text else answer
                context, raw = statistics.median(redacted_times), statistics.median(raw_times)
        finally:
            daemon.stop()
    result = {
        "machine": machine(),
        "events": events,
        "read_back_ms": round(read_back * 1000, 2),
        "context_ms": round(context * 1000, 2),
        "raw_context_ms": round(raw * 1000, 2),
        "ratio": round(context / read_back, 2),
        "redacted": document["redaction"]["counts"],
        "context_tokens": document["tokens"],
        "included": len(document["included"]),
        "left_out": len(document["left_out"]),
        "fitted_by": (document["fitted_by"] or {}).get("policy"),
        "target": TARGET,
    }
    result["pass"] = result["ratio"] <= TARGET
    if args.json:
        print(json.dumps(result, indent=2))
        return
    keys = ("events", "read_back_ms", "context_ms", "raw_context_ms", "ratio", "context_tokens", "included", "left_out")
    for key in (*keys, "fitted_by", "redacted"):
        print(f"{key:>15}: {result[key]}")
    print(f"target: context <= {TARGET}x the read-back: {'PASS' if result['pass'] else 'SHORT'}")


if __name__ == "__main__":
    main()
