"""Injection benchmark: how long a SessionStart hook waits for the context it gives the agent,
on a log of 100,000 events (docs/injection.md).

A real daemon in a fresh TOKA_HOME holds 50 sessions of 2,000 events each (bench_handoff's
realistic mix: messages, tool calls and results, notes, usage), all run in one folder. Timed, each
``--runs`` times:

- ``hooks.answer`` round trips through the client, the daemon's answer time, for a SessionStart
  - ``startup`` in a folder whose previous session was not handed on (the common case: nothing
    to give),
  - ``compact`` of a session whose handoff is current (the PreCompact built it): the handoff is
    read and given,
  - ``compact`` of a session that did more after its handoff: the handoff is built again (a
    2,000-event session read and folded) and given;
- the reference: ``events.append`` of the same SessionStart event, the round trip the hook made
  before it could answer;
- the whole hook as Claude Code runs it (``toka hook claude-code``, a process per run) for a
  ``compact`` that gives a current handoff, against the same process with ``TOKA_INJECT=0``.

Target: the answer's p99 under 50 ms. Run ``python benchmarks/bench_inject.py`` (about a minute,
most of it filling the log); ``--json`` prints the results as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_foundation import DaemonProcess, Home, log, machine, percentile, spread
from bench_handoff import session_events

SESSIONS = 50
PER_SESSION = 2000
FOLDER = "/work/shop"
TARGET_MS = 50.0
TOKA = Path(sys.executable).parent / "toka"


def start(session: str, source: str, n: int) -> dict[str, Any]:
    payload = {"session_id": session, "hook_event_name": "SessionStart", "source": source, "cwd": FOLDER}
    key = f"bench:{session}:{source}:{n}"
    return {"session": session, "kind": "hook.session_start", "key": key, "payload": payload}


def fill(daemon: DaemonProcess) -> list[str]:
    """The log: SESSIONS sessions of PER_SESSION events, each started in FOLDER."""
    client = daemon.client()
    names = [f"bench-inject-{k:02d}" for k in range(SESSIONS)]
    for name in names:
        client.call("hooks.answer", event=start(name, "startup", 0))
        events = [{**e, "session": name} for e in session_events(PER_SESSION - 1)]
        for first in range(0, len(events), 500):
            client.append(events[first : first + 500])
    client.close()
    return names


def timed(call: Callable[[int], Any], runs: int) -> list[float]:
    times = []
    for n in range(runs):
        begin = time.perf_counter()
        call(n)
        times.append(time.perf_counter() - begin)
    return times


def summary(times: list[float]) -> dict[str, float]:
    return spread(times, "ms") | {"p99_ms": round(percentile(times, 99) * 1000, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    runs = args.runs
    with tempfile.TemporaryDirectory(prefix="toka-bi-", dir="/tmp") as tmp:
        home = Home(Path(tmp), "h")
        with DaemonProcess(home) as daemon:
            log(f"filling the log: {SESSIONS} sessions of {PER_SESSION} events")
            names = fill(daemon)
            client = daemon.client()
            current, stale = names[0], names[1]
            client.call("handoffs.create", target=current)
            client.call("handoffs.create", target=stale)
            events = client.call("status")["events"]
            log("timing")
            results: dict[str, Any] = {}

            def answer(session: str, source: str) -> Callable[[int], Any]:
                def call(n: int) -> Any:
                    return client.call("hooks.answer", event=start(session, source, n + 1))

                return call

            def appended(n: int) -> Any:
                return client.append([start("bench-inject-new", "startup", n + 1)])

            def stale_compact(n: int) -> Any:
                client.note(stale, "decision", f"decision {n} after the handoff")
                return client.call("hooks.answer", event=start(stale, "compact", n + 1))

            given = client.call("hooks.answer", event=start(current, "compact", 0))["context"]
            assert given, "a compact of a session with a current handoff gives it"
            results["append_reference"] = summary(timed(appended, runs))
            results["startup_nothing"] = summary(timed(answer("bench-inject-new2", "startup"), runs))
            results["compact_current_handoff"] = summary(timed(answer(current, "compact"), runs))
            results["compact_rebuilt_handoff"] = summary(timed(stale_compact, max(10, runs // 10)))
            client.close()

            env = {k: v for k, v in os.environ.items() if not k.startswith("TOKA_")} | {"TOKA_HOME": str(home.root)}
            process_runs = max(10, runs // 4)

            def hook_process(inject: bool) -> Callable[[int], Any]:
                variables = env if inject else env | {"TOKA_INJECT": "0"}

                def call(n: int) -> Any:
                    payload = start(current, "compact", 10_000 + n + (0 if inject else 5000))["payload"]
                    done = subprocess.run(
                        [str(TOKA), "hook", "claude-code"],
                        input=json.dumps(payload).encode(),
                        capture_output=True,
                        env=variables,
                        check=True,
                    )
                    assert bool(done.stdout) == inject
                    return done

                return call

            plain, injecting = [], []
            for _ in range(process_runs):  # alternated, so that load falls on both alike
                plain += timed(hook_process(False), 1)
                injecting += timed(hook_process(True), 1)
            results["hook_process_plain"] = summary(plain)
            results["hook_process_injecting"] = summary(injecting)
    ratio = results["hook_process_injecting"]["p50_ms"] / results["hook_process_plain"]["p50_ms"]
    worst = max(results[k]["p99_ms"] for k in ("startup_nothing", "compact_current_handoff"))
    report = {
        "machine": machine(),
        "events": events,
        "runs": runs,
        "results": results,
        "hook_process_ratio_p50": round(ratio, 3),
        "target_p99_ms": TARGET_MS,
        "pass": worst < TARGET_MS,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{events:,} events in the log; {runs} runs (the rebuild and the processes fewer)")
    for name, figures in results.items():
        print(f"{name:26s} p50 {figures['p50_ms']:7.1f} ms  p99 {figures['p99_ms']:7.1f} ms  n={figures['n']}")
    print(f"the hook process, injecting vs TOKA_INJECT=0 (p50): {ratio:.2f}x")
    verdict = "PASS" if report["pass"] else "SHORT"
    print(f"target: SessionStart answer p99 < {TARGET_MS:.0f} ms (nothing to give, a current handoff): {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
