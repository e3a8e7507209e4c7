"""How soon a line written to a watched transcript is in the log, with its usage figures.

A daemon runs with ``[watch] paths`` set to a folder. A Claude Code transcript (the largest
fixture in ../shared, or a generated one when it is absent) is appended to that folder's file
one line at a time, at a steady pace. For each line that carries usage, the time from the write
until ``usage`` reports the new figures is measured through the client (polling every 2 ms);
for every line, the time until a subscriber receives the line's last event. The target of the
design is one second; the reference for the machine is one round trip of the client (``hello``)
measured in the same run.

    .venv/bin/python benchmarks/bench_watch.py [--lines N] [--pace-ms MS] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_foundation import DaemonProcess, Home, machine, spread

from daemon.client.sync import Client
from daemon.ingest.formats import PARSERS
from daemon.ingest.lines import ParseStats

ROOT = Path(__file__).resolve().parents[1]
CLAUDE_FIXTURES = ROOT.parent / "shared" / "fixtures" / "transcripts" / "claude"
FIXTURE = CLAUDE_FIXTURES / "marot__fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
TARGET_S = 1.0


def source_lines(limit: int) -> tuple[list[bytes], str]:
    if FIXTURE.exists():
        return FIXTURE.read_bytes().splitlines(keepends=True)[:limit], FIXTURE.name
    sys.path.insert(0, str(ROOT / "tests"))
    import watch_support

    lines = watch_support.lines()
    return (lines * (limit // len(lines) + 1))[:limit], "tests/watch_support.py (generated)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=300)
    parser.add_argument("--pace-ms", type=float, default=20.0, help="pause between two lines")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    lines, source = source_lines(args.lines)
    with tempfile.TemporaryDirectory(prefix="tkw", dir="/tmp") as tmp:
        home = Home(Path(tmp), "h")
        folder = Path(tmp) / "projects"
        folder.mkdir()
        home.paths.config_file.write_text(f'[watch]\nagents = false\npaths = ["{folder}"]\n')
        target = folder / "session.jsonl"
        # What each prefix of the file should give: its events' keys, and the usage reported.
        probe = Path(tmp) / "probe.jsonl"
        probe.write_bytes(b"".join(lines))
        session = list(PARSERS["claude-code"](probe, ParseStats()))[-1]["session"]
        probe.unlink()
        expected_keys: list[set[str]] = []
        with probe.open("wb") as handle:
            for line in lines:
                handle.write(line)
                handle.flush()
                events = PARSERS["claude-code"](probe, ParseStats())
                expected_keys.append({e["key"] for e in events if e["session"] == session})

        daemon = DaemonProcess(home)
        try:
            with Client(home.paths, autostart=False) as client:
                started = time.perf_counter()
                for _ in range(200):
                    client.call("hello")
                round_trip = (time.perf_counter() - started) / 200

            arrived: dict[str, float] = {}
            stop = threading.Event()

            def subscribe() -> None:
                try:
                    with Client(home.paths, autostart=False, timeout=None) as sub:
                        for event in sub.subscribe(session=session, after_seq=0):
                            arrived.setdefault(event["key"], time.perf_counter())
                            if stop.is_set():
                                return
                except Exception as exc:
                    if not stop.is_set():  # the stream ends when the daemon stops
                        print(f"subscriber failed: {exc!r}", file=sys.stderr)

            threading.Thread(target=subscribe, daemon=True).start()
            time.sleep(0.3)
            to_event: list[float] = []
            to_usage: list[float] = []
            with Client(home.paths, autostart=False) as client, target.open("ab") as out:
                seen: set[str] = set()
                for number, line in enumerate(lines):
                    new_keys = expected_keys[number] - seen
                    seen |= new_keys
                    written = time.perf_counter()
                    out.write(line)
                    out.flush()
                    if any(k.startswith("usage:") for k in new_keys):
                        want = sum(1 for k in expected_keys[number] if k.startswith("usage:"))
                        while True:
                            try:
                                calls = client.call("usage", session=session)["calls"]
                            except Exception:  # the session is not in the log yet
                                calls = 0
                            if calls >= want:
                                break
                            time.sleep(0.002)
                        to_usage.append(time.perf_counter() - written)
                    deadline = time.perf_counter() + 10
                    while not new_keys <= arrived.keys() and time.perf_counter() < deadline:
                        time.sleep(0.001)
                    if new_keys:
                        to_event.append(max(arrived[k] for k in new_keys) - written)
                    time.sleep(args.pace_ms / 1000)
            stop.set()
        finally:
            daemon.stop()

    result = {
        "machine": machine(),
        "source": source,
        "lines": len(lines),
        "pace_ms": args.pace_ms,
        "client_round_trip_ms": round(round_trip * 1000, 3),
        "line_to_subscriber": spread(to_event, "ms"),
        "line_to_usage": spread(to_usage, "ms"),
        "target_ms": TARGET_S * 1000,
        "met": max(to_event + to_usage) <= TARGET_S,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"source: {source}, {len(lines)} lines, one every {args.pace_ms} ms")
    print(f"client round trip (hello): {result['client_round_trip_ms']} ms")
    for name in ("line_to_subscriber", "line_to_usage"):
        figures = result[name]
        p50, p95, top = figures["p50_ms"], figures["p95_ms"], figures["max_ms"]
        print(f"{name}: n={figures['n']} p50 {p50} ms, p95 {p95} ms, max {top} ms")
    print(f"target: every line within {TARGET_S * 1000:.0f} ms: {'PASS' if result['met'] else 'SHORT'}")


if __name__ == "__main__":
    main()
