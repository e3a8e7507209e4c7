"""Handoff benchmark: building a handoff document from a 2,000-event session against reading
those events back through the client.

A handoff is built when an agent's context is nearly full, from events the daemon reads anyway,
so its cost is measured against the read: the reference R is ``Client.iter_events`` of the
session from a real daemon (a fresh TOKA_HOME, events appended beforehand), in the same run on
the same machine. Measured against R:

- the fold alone (``HandoffBuilder.add`` per event, then ``finish``), over the same events as
  ``store.events.Event`` objects (the daemon holds them so; converting the client's dicts is
  done before the clock starts);
- the fold plus all three renders (markdown, continuation prompt, JSON).

Target: the fold at most 10% of R. The session is generated: a realistic mix of user and
assistant messages, tool calls and results (outputs of a few KB, some failing, file writes,
to-do updates), usage events and notes. Run ``python benchmarks/bench_handoff.py``
(a few seconds); ``--events N`` changes the size, ``--json`` prints the results as JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_foundation import DaemonProcess, Home, machine

from daemon.handoff import HandoffBuilder, Subject, render_json, render_markdown, render_prompt
from store.events import Event, parse_ts

SESSION = "bench-handoff"
REPS = 7
TARGET = 0.10
TOOLS = ("Read", "Bash", "Grep", "Edit", "Write", "TodoWrite")


def session_events(count: int) -> list[dict[str, Any]]:
    """``count`` events of one session, in the shapes the importers write."""
    events: list[dict[str, Any]] = []
    i = 0
    while len(events) < count:
        step = i % 12
        if step == 0:
            events.append({"kind": "message", "payload": {"role": "user", "text": f"Request {i}: " + "fix it " * 40}})
        elif step == 1:
            events.append({"kind": "note.decision", "payload": {"text": f"Decision {i}", "reason": "because"}})
        elif step in (2, 4, 6, 8):
            tool = TOOLS[(i // 3) % len(TOOLS)]
            call_id = f"c{i}"
            if tool == "TodoWrite":
                call_input: dict[str, Any] = {
                    "todos": [
                        {"content": f"step {k}", "status": "completed" if k < 3 else "pending", "activeForm": "x"}
                        for k in range(8)
                    ]
                }
            elif tool in ("Edit", "Write"):
                call_input = {"file_path": f"src/module_{i % 40}.py", "old_string": "a" * 200, "new_string": "b" * 300}
            else:
                call_input = {"command": f"pytest -q tests/test_{i}.py", "description": "run the tests"}
            events.append({"kind": "tool.call", "payload": {"tool": tool, "tool_use_id": call_id, "input": call_input}})
            events.append(
                {
                    "kind": "tool.result",
                    "payload": {"tool_use_id": call_id, "output": "line of output\n" * 150, "is_error": i % 17 == 0},
                }
            )
        elif step == 10:
            events.append(
                {
                    "kind": "usage",
                    "payload": {
                        "model": "claude-opus-4-6",
                        "input_tokens": 10,
                        "output_tokens": 400,
                        "cache_creation_tokens": 2000,
                        "cache_read_tokens": 90_000,
                    },
                }
            )
        else:
            events.append({"kind": "message", "payload": {"role": "assistant", "text": "Working on it. " * 30}})
        i += 1
    start = 1_780_000_000
    return [{"session": SESSION, "agent": "main", "ts": start + n, **e} for n, e in enumerate(events[:count])]


def as_event(data: dict[str, Any]) -> Event:
    return Event(
        data["seq"],
        data["id"],
        data["session"],
        data["agent"],
        data["kind"],
        parse_ts(data["ts"]),
        tuple(data["parents"]),
        data["digest"],
        data["key"],
        data["payload"],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    subject = Subject(agent="main", session=SESSION, version=1, state="CRITICAL", reason="CONTEXT_WINDOW_EXHAUSTED")
    with (
        tempfile.TemporaryDirectory(prefix="toka-bh-", dir="/tmp") as tmp,
        DaemonProcess(Home(Path(tmp), "h")) as daemon,
    ):
        client = daemon.client()
        generated = session_events(args.events)
        for start in range(0, len(generated), 500):
            client.append(generated[start : start + 500])
        read_times, fold_times, full_times = [], [], []
        events: list[Event] = []
        for _ in range(REPS):
            begin = time.perf_counter()
            rows = list(client.iter_events(session=SESSION))
            read_times.append(time.perf_counter() - begin)
            assert len(rows) == args.events
            events = [as_event(row) for row in rows]
        usage = {"context_tokens": 180_000, "context_window": 200_000, "fill_pct": 90.0}
        sizes: dict[str, int] = {}
        for _ in range(REPS):
            begin = time.perf_counter()
            builder = HandoffBuilder()
            for event in events:
                builder.add(event)
            document = builder.finish(subject, usage)
            fold_times.append(time.perf_counter() - begin)
            begin = time.perf_counter()
            builder = HandoffBuilder()
            for event in events:
                builder.add(event)
            document = builder.finish(subject, usage)
            markdown, prompt, data = render_markdown(document), render_prompt(document), render_json(document)
            full_times.append(time.perf_counter() - begin)
            sizes = {"markdown": len(markdown), "prompt": len(prompt), "json": len(json.dumps(data))}
        client.close()
    read, fold, full = (statistics.median(t) for t in (read_times, fold_times, full_times))
    results = {
        "machine": machine(),
        "events": args.events,
        "read_ms": round(read * 1000, 2),
        "fold_ms": round(fold * 1000, 2),
        "fold_and_renders_ms": round(full * 1000, 2),
        "fold_ratio": round(fold / read, 4),
        "fold_and_renders_ratio": round(full / read, 4),
        "target": TARGET,
        "pass": fold / read <= TARGET,
        "document_chars": sizes,
    }
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"{args.events} events, median of {REPS}")
        print(f"read through the client (R):  {results['read_ms']:8.2f} ms")
        print(f"fold (add + finish):           {results['fold_ms']:8.2f} ms  {results['fold_ratio']:.3f} x R")
        print(
            f"fold + three renders:          {results['fold_and_renders_ms']:8.2f} ms  "
            f"{results['fold_and_renders_ratio']:.3f} x R"
        )
        print(f"target: fold <= {TARGET:.2f} x R: {'PASS' if results['pass'] else 'SHORT'}")
        print(f"document sizes (chars): {sizes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
