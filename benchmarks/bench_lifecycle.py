"""What the lifecycle adds to an append: a usage event (folded into its agent's figures, checked
against the thresholds) against a plain event of the same size, both appended one per request
through the client to a real daemon, measured in the same run.

    .venv/bin/python benchmarks/bench_lifecycle.py [--events N] [--rounds R] [--json]

Three series, each in its own session, alternated over the rounds:
- plain: an event of kind ``metric`` carrying the usage payload (no lifecycle work);
- usage: a ``usage`` event whose prompt stays below 75% (evaluated, no change of state);
- crossing: ``usage`` events alternating between 70% and 80% of the window, so every one moves
  the agent between ACTIVE and WARNING (a lifecycle event appended and committed each time).
The target (a usage event with its lifecycle update ≤ 1.2 × a plain append) is for the second.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_foundation import DaemonProcess, Home, machine, spread

from daemon.client.sync import Client

TARGET = 1.2


def payload(i: int, prompt: int) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "input_tokens": 100 + i % 7,
        "cache_read_tokens": prompt - 100,
        "cache_creation_tokens": 0,
        "output_tokens": 200 + i % 13,
    }


def series(client: Client, session: str, kind: str, count: int, prompt_of: Any, start: int) -> list[float]:
    times = []
    for i in range(start, start + count):
        event = {"session": session, "kind": kind, "payload": payload(i, prompt_of(i))}
        began = time.perf_counter()
        client.call("events.append", events=[event])
        times.append(time.perf_counter() - began)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=500, help="events per series and round")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    calm = lambda i: 100_000  # noqa: E731 - 50% of 200k
    swinging = lambda i: 140_000 if i % 2 else 160_000  # noqa: E731 - 70% / 80%
    plans = [("plain", "metric", calm), ("usage", "usage", calm), ("crossing", "usage", swinging)]
    times: dict[str, list[float]] = {name: [] for name, _, _ in plans}
    with tempfile.TemporaryDirectory(prefix="tkl", dir="/tmp") as tmp:
        home = Home(Path(tmp), "h")
        daemon = DaemonProcess(home)
        try:
            with Client(home.paths, autostart=False) as client:
                for name, kind, prompt in plans:  # warm-up
                    series(client, f"warm-{name}", kind, 50, prompt, 0)
                for round_ in range(args.rounds):
                    order = plans if round_ % 2 == 0 else list(reversed(plans))
                    for name, kind, prompt in order:
                        start = round_ * args.events
                        times[name] += series(client, name, kind, args.events, prompt, start)
                lifecycle_events = len(list(client.iter_events(session="crossing", kinds=["lifecycle"])))
        finally:
            daemon.stop()

    result: dict[str, Any] = {"machine": machine(), **{name: spread(v, "us") for name, v in times.items()}}
    plain = result["plain"]["p50_us"]
    result["usage_ratio_p50"] = round(result["usage"]["p50_us"] / plain, 2)
    result["crossing_ratio_p50"] = round(result["crossing"]["p50_us"] / plain, 2)
    result["crossing_lifecycle_events"] = lifecycle_events
    result["target"] = TARGET
    result["pass"] = result["usage_ratio_p50"] <= TARGET
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for name in times:
        f = result[name]
        print(f"{name:>9}: p50 {f['p50_us']} µs, p95 {f['p95_us']} µs, mean {f['mean_us']} µs (n={f['n']})")
    print(
        f"usage / plain p50: {result['usage_ratio_p50']}× (target ≤ {TARGET}×): {'PASS' if result['pass'] else 'SHORT'}"
    )
    print(f"crossing / plain p50: {result['crossing_ratio_p50']}× ({lifecycle_events} lifecycle events)")


if __name__ == "__main__":
    main()
