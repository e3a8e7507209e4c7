"""`toka admin copy`: a SQLite log copied into PostgreSQL, fresh, again, and after it grew.

Starts a throw-away PostgreSQL server with its default durability (tests/postgres_server.py, as
bench_postgres.py does) and a daemon on SQLite in a temporary TOKA_HOME, fills the log with
``--events`` events over 12 sessions (one in seven with an idempotency key, one in fifty with a
large payload that is stored compressed), then times ``admin.copy`` through the client:

- **fresh**: into an empty database (its schema made by the copy);
- **again**: the same copy once more, every event already there (what a resumed copy costs for
  the part it skips);
- **grown**: the log grows by half, and the copy brings the target up to date.

Each reports the copy's own seconds and events/s (events read from the log, per second), the
verify on the target after it, and the whole call as the client sees it.

    .venv/bin/python benchmarks/bench_copy.py [--events N] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import postgres_server  # noqa: E402
import psycopg  # noqa: E402
from bench_foundation import DaemonProcess, Home, log, machine  # noqa: E402

from daemon.client.sync import Client  # noqa: E402

SESSIONS = 12


def fill(client: Client, start: int, stop: int) -> None:
    batch = []
    for i in range(start, stop):
        text = f"event {i}: " + ("a tool's long output, " * (120 if i % 50 == 0 else 2))
        event: dict[str, Any] = {"session": f"s{i % SESSIONS}", "kind": "message", "payload": {"text": text}}
        if i % 7 == 0:
            event["key"] = f"k{i}"
        batch.append(event)
        if len(batch) == 1000:
            client.append(batch)
            batch = []
    if batch:
        client.append(batch)


def copy(client: Client, url: str) -> dict[str, Any]:
    started = time.perf_counter()
    report: dict[str, Any] = client.call("admin.copy", progress=lambda done, total: None, to=url)
    wall = time.perf_counter() - started
    assert report["verify"]["ok"] and not report["mismatched"], report
    return {
        "events": report["events"],
        "copied": report["copied"],
        "present": report["present"],
        "seconds": report["seconds"],
        "events_per_s": round(report["events"] / report["seconds"]),
        "verify_seconds": report["verify_seconds"],
        "call_seconds": round(wall, 3),
    }


def run(events: int) -> dict[str, Any]:
    server = postgres_server.start(durable=True)
    try:
        with tempfile.TemporaryDirectory(prefix="tkcp", dir="/tmp") as root:
            daemon = DaemonProcess(Home(Path(root), "h"))
            try:
                with Client(daemon.home.paths, autostart=False, timeout=600) as client:
                    with psycopg.connect(server.url, autocommit=True) as admin:
                        admin.execute("CREATE DATABASE copy_target")
                    url = postgres_server.with_dbname(server.url, "copy_target")
                    log(f"filling the log with {events} events")
                    fill(client, 0, events)
                    results = {"machine": machine(), "events": events}
                    log("copying into an empty database")
                    results["fresh"] = copy(client, url)
                    log("copying again")
                    results["again"] = copy(client, url)
                    fill(client, events, events + events // 2)
                    log("copying what the log gained")
                    results["grown"] = copy(client, url)
                    return results
            finally:
                daemon.process.terminate()
                daemon.process.wait(30)
    finally:
        postgres_server.stop(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.events)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for name in ("fresh", "again", "grown"):
        r = result[name]
        print(
            f"{name}: {r['events']:,} events read, {r['copied']:,} copied, {r['present']:,} present"
            f" in {r['seconds']:.2f} s = {r['events_per_s']:,} events/s; verify {r['verify_seconds']:.2f} s;"
            f" whole call {r['call_seconds']:.2f} s"
        )


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
