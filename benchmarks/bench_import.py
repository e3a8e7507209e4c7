"""Import benchmark: `toka import` of the largest Claude Code and Codex fixtures against json.loads.

Every figure is a ratio against a reference measured in the same run on the same machine: a bare
``json.loads`` of each line of the same file (read as bytes, line by line), which is the least any
importer of JSON lines must do. Measured per format:

- the parser alone (``daemon.ingest.formats.PARSERS``, no daemon): events/s and MB/s;
- the whole ``toka import FILE --json`` (the real command, a child process) into a real daemon
  with a fresh TOKA_HOME, once the daemon has finished starting, and the CPU time the command and
  the daemon spent on it: parse, batches of 1000 events over the socket, hashing, SQLite commits,
  until the derived tables hold the events too (what ``toka import --wait`` waits for);
- what bounds it: the parsed events appended straight to a ``SqliteStore`` in this process, 1000
  per call (canonical JSON, hashing, compression and the commits; no socket, no request JSON),
  and the blobs and events rows that store wrote inserted again with ``executemany`` into an
  empty database of the same schema and settings, 1000 events per transaction (SQLite alone);
- ``sessions.list`` on a log of 100 imported Claude Code sessions (copies of the largest fixture
  under 1 MB), to show what listing source, project, model and fill costs per session;
- with ``--against TREE``, the whole ``toka import`` again with the daemon and the command of
  another source tree (``PYTHONPATH``; run from outside both trees), alternated round by round;
- ``toka import`` of a generated Claude Code transcript of 1,500 file reads of 20 KB each (30
  MB, 20 KB a record: requests are cut by bytes, a few hundred events each, not by count).

The fixtures are a few MB, so each is replicated into one bigger temporary file: in a Claude Code
file, copy ``k`` has every UUID, message id and request id rewritten with a suffix of its own, so
no key repeats and every copy is a distinct session that imports in full; a Codex file is one
session whatever it holds (its first line names it) and its keys are line numbers already, so
its copies are appended as they are.

Run ``python benchmarks/bench_import.py`` (about a minute on 2 cores); ``--copies N`` sets the
replication, ``--large-only`` measures the generated transcript alone, ``--json`` prints the
results as JSON. Needs ../shared/fixtures/transcripts (but for ``--large-only``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench_foundation import DaemonProcess, Home, Row, machine, table

from daemon.ingest.formats import PARSERS
from daemon.ingest.lines import ParseStats
from store.events import parse_new_event
from store.sqlite.connect import prepare_writer
from store.sqlite.store import SqliteStore

HERE = Path(__file__).resolve()
TRANSCRIPTS = HERE.parents[2] / "shared" / "fixtures" / "transcripts"
TOKA = Path(sys.executable).parent / "toka"
REPS = 3
TARGET = 0.20  # of json.loads' throughput, end to end (the derived tables included)
BATCH = 1000  # events per append, as `toka import` sends them
LISTED_SESSIONS = 100
# The generated transcript of large tool results: 1,500 reads of 20 KB.
LARGE_READS = 1500
LARGE_READ_BYTES = 20_000
# Ids that key Claude Code records: UUIDs (uuid, parentUuid, sessionId) and the API's message
# and request ids (which key usage events and their de-duplication).
_UUID = re.compile(rb"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{8})[0-9a-f]{4}")
_API_ID = re.compile(rb'"((?:msg|req)_[A-Za-z0-9]+)"')


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def largest(folder: str) -> Path:
    files = sorted((TRANSCRIPTS / folder).glob("*.jsonl"), key=lambda p: p.stat().st_size)
    if not files:
        raise SystemExit(f"no fixtures in {TRANSCRIPTS / folder}: check out ../shared beside the project")
    return files[-1]


def replicate(source: Path, target: Path, copies: int, fmt: str) -> None:
    """``copies`` copies of ``source`` in one file, each with ids (and so keys) of its own."""
    lines = source.read_bytes().splitlines(keepends=True)
    if lines and not lines[-1].endswith(b"\n"):
        lines[-1] += b"\n"
    with target.open("wb") as out:
        for copy in range(copies):
            if fmt == "codex" or copy == 0:
                out.writelines(lines)
                continue
            tag = f"{copy:04x}".encode()
            for line in lines:
                line = _UUID.sub(rb"\g<1>" + tag, line)
                out.write(_API_ID.sub(rb'"\g<1>_c' + tag + b'"', line))


def json_loads_once(path: Path) -> tuple[float, int]:
    started = time.perf_counter()
    records = 0
    with path.open("rb") as handle:
        for line in handle:
            if line.strip():
                json.loads(line)
                records += 1
    return time.perf_counter() - started, records


def parse_once(path: Path, fmt: str) -> tuple[float, int]:
    stats = ParseStats()
    started = time.perf_counter()
    events = sum(1 for _ in PARSERS[fmt](path, stats))
    return time.perf_counter() - started, events


def import_once(path: Path, work: Path, name: str, tree: str | None = None) -> tuple[float, dict[str, Any], Home]:
    """``toka import PATH --json`` into a fresh TOKA_HOME with its daemon already up, until the
    daemon has applied the events to its search index and session tables too (a ``stats``
    request, which waits for them in every version, as ``--wait`` does). ``tree``: the source
    tree the daemon and the command run from (``PYTHONPATH``; run the benchmark from outside any
    tree, so that the current folder does not come first), else this one."""
    home = Home(work, name, embeddings=False)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKA_")}
    env["TOKA_HOME"] = str(home.root)
    if tree is not None:
        env["PYTHONPATH"] = tree
    with DaemonProcess(home, settings={"PYTHONPATH": tree} if tree else None) as daemon:
        _settle(daemon.pid)
        daemon_cpu, children = _cpu_of(daemon.pid), _children_cpu()
        started = time.perf_counter()
        done = subprocess.run([str(TOKA), "import", str(path), "--json"], env=env, capture_output=True, text=True)
        with daemon.client() as client:
            client.call("stats")
        seconds = time.perf_counter() - started
        CPU[home.root.name] = (_cpu_of(daemon.pid) - daemon_cpu, _children_cpu() - children)
    if done.returncode != 0:
        raise RuntimeError(f"toka import failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds, json.loads(done.stdout), home


# CPU seconds of each import (by its home's name): the daemon's, and the `toka import` process's.
CPU: dict[str, tuple[float, float]] = {}


def _settle(pid: int, quiet_s: float = 0.3, longest_s: float = 15.0) -> None:
    """Wait until the daemon has finished starting: its background start-up (the embedder loading
    its model, about 0.4 s of CPU) would otherwise share the cores with the import, which a
    daemon that runs all day does not do. Done once no CPU time was spent for ``quiet_s``."""
    deadline = time.monotonic() + longest_s
    spent = _cpu_of(pid)
    while time.monotonic() < deadline:
        time.sleep(quiet_s)
        now = _cpu_of(pid)
        if now - spent < 0.01:
            return
        spent = now


def _cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def store_once(path: Path, fmt: str, database: Path) -> float:
    """Seconds to append the file's parsed events to a fresh SqliteStore, 1000 per call."""
    parsed = list(PARSERS[fmt](path, ParseStats()))
    batches = [[parse_new_event(event) for event in batch] for batch in _batches(parsed)]

    async def append_all() -> float:
        store = await SqliteStore.open(database)
        try:
            started = time.perf_counter()
            for batch in batches:
                await store.append(batch)
            return time.perf_counter() - started
        finally:
            await store.close()

    return asyncio.run(append_all())


def sqlite_once(written: Path, database: Path) -> float:
    """Seconds to insert the rows of ``written`` again, batch by batch, each batch's events with
    the blobs they are first to use, into an empty database set up as the store's writer is."""
    with closing(sqlite3.connect(written)) as source:
        blobs = {row[0]: row for row in source.execute("SELECT * FROM blobs")}
        events = source.execute("SELECT * FROM events ORDER BY seq").fetchall()
    batches = [([blobs.pop(e[7]) for e in batch if e[7] in blobs], batch) for batch in _batches(events)]
    with closing(sqlite3.connect(database, isolation_level=None)) as db:
        prepare_writer(db, "normal")
        started = time.perf_counter()
        for new_blobs, batch in batches:
            db.execute("BEGIN IMMEDIATE")
            if new_blobs:  # the large payloads; a small one is in its event's row
                db.executemany("INSERT INTO blobs VALUES (?, ?, ?, ?)", new_blobs)
            db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", batch)
            db.execute("COMMIT")
        return time.perf_counter() - started


def _batches(items: list[Any]) -> list[list[Any]]:
    return [items[n : n + BATCH] for n in range(0, len(items), BATCH)]


def sessions_list(home: Home, reps: int = 5) -> tuple[float, int]:
    with DaemonProcess(home) as daemon, daemon.client() as client:
        client.call("sessions.list")  # warm
        times = []
        for _ in range(reps):
            started = time.perf_counter()
            count = len(client.call("sessions.list")["sessions"])
            times.append(time.perf_counter() - started)
    return statistics.median(times), count


def large_reads(path: Path, reads: int = LARGE_READS, size: int = LARGE_READ_BYTES) -> None:
    """A Claude Code transcript of ``reads`` file reads, each a ``Read`` call and its result of
    ``size`` characters, different for every read."""
    session = "5e0d9a3c-0b1e-4c55-9a43-0d6f2b1f9e11"
    with path.open("wb") as out:
        for n in range(reads):
            stamp = {"sessionId": session, "timestamp": f"2026-03-01T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z"}
            call = {"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {"file_path": f"m{n}.py"}}
            usage = {"input_tokens": 4, "cache_read_input_tokens": 1000 + n, "output_tokens": 20}
            message = {"id": f"msg_{n}", "role": "assistant", "model": "claude-sonnet-4-5", "content": [call]}
            line = f"{n:06d} def handler(request): return respond(request, status=200)\n"
            text = (line * (size // len(line) + 1))[:size]
            result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": text}
            records = (
                {"type": "assistant", "uuid": f"a{n}", "requestId": f"req_{n}", "message": {**message, "usage": usage}},
                {"type": "user", "uuid": f"r{n}", "message": {"role": "user", "content": [result]}},
            )
            for record in records:
                out.write(json.dumps({**record, **stamp}).encode() + b"\n")


def large_rows(work: Path) -> tuple[list[Row], dict[str, Any]]:
    path = work / "large.jsonl"
    large_reads(path)
    size = path.stat().st_size
    log(f"large tool results: {LARGE_READS} reads of {LARGE_READ_BYTES:,} B = {size:,} B")
    json_loads_once(path)  # warm the page cache
    loads_t, import_t = [], []
    summary: dict[str, Any] = {}
    for rep in range(REPS):
        loads_t.append(json_loads_once(path)[0])
        seconds, summary, _ = import_once(path, work, f"lg{rep}")
        import_t.append(seconds)
        log(f"  rep {rep}: json.loads {loads_t[-1]:.2f}s, import {seconds:.2f}s")
    if summary["created"] != summary["events"] or summary["bad_lines"]:
        raise RuntimeError(f"import stored {summary['created']} of {summary['events']} events")
    loads, full = statistics.median(loads_t), statistics.median(import_t)
    events = summary["events"]
    rows = [
        Row(
            "large tool results: json.loads of each line (reference)",
            f"{2 * LARGE_READS / loads:,.0f} rec/s, {mb(size, loads)}",
            "—",
            "—",
            "—",
            "info",
            {"seconds": loads_t},
        ),
        Row(
            "large tool results: `toka import` via daemon",
            f"{events / full:,.0f} ev/s, {mb(size, full)}",
            f"json.loads {mb(size, loads)}",
            f"{loads / full:.0%}",
            "—",
            "info",
            {"seconds": import_t, "events": events, "bytes": size},
        ),
    ]
    return rows, {"reads": LARGE_READS, "read_bytes": LARGE_READ_BYTES, "bytes": size, "events": events}


def mb(n: int, seconds: float) -> str:
    return f"{n / seconds / 1e6:,.1f} MB/s"


def run(copies: dict[str, int], work: Path, against: str | None = None) -> tuple[list[Row], dict[str, Any]]:
    rows: list[Row] = []
    inputs: dict[str, Any] = {}
    for fmt, folder in (("claude-code", "claude"), ("codex", "codex")):
        source = largest(folder)
        path = work / f"{fmt}.jsonl"
        replicate(source, path, copies[fmt], fmt)
        size = path.stat().st_size
        log(f"{fmt}: {source.name} ({source.stat().st_size:,} B) x {copies[fmt]} = {size:,} B")
        json_loads_once(path), parse_once(path, fmt)  # warm the page cache and the imports
        loads_t, parse_t, import_t, store_t, sqlite_t, against_t = [], [], [], [], [], []
        records = events = 0
        summary: dict[str, Any] = {}
        for rep in range(REPS):
            seconds, records = json_loads_once(path)
            loads_t.append(seconds)
            seconds, events = parse_once(path, fmt)
            parse_t.append(seconds)
            if against is not None and rep % 2 == 0:  # alternated: B first in every other round
                against_t.append(import_once(path, work, f"{fmt[:2]}b{rep}", against)[0])
            seconds, summary, _ = import_once(path, work, f"{fmt[:2]}{rep}")
            import_t.append(seconds)
            if against is not None and rep % 2 == 1:
                against_t.append(import_once(path, work, f"{fmt[:2]}b{rep}", against)[0])
                log(f"  rep {rep}: B import {against_t[-1]:.2f}s")
            elif against is not None:
                log(f"  rep {rep}: B import {against_t[-1]:.2f}s")
            written = work / f"{fmt}-store-{rep}.db"
            store_t.append(store_once(path, fmt, written))
            sqlite_t.append(sqlite_once(written, work / f"{fmt}-sqlite-{rep}.db"))
            log(
                f"  rep {rep}: json.loads {loads_t[-1]:.2f}s, parse {parse_t[-1]:.2f}s, import {seconds:.2f}s,"
                f" store alone {store_t[-1]:.2f}s, SQLite alone {sqlite_t[-1]:.2f}s"
            )
        if summary["created"] != events or summary["bad_lines"]:
            raise RuntimeError(f"import stored {summary['created']} of {events} events: {summary['bad_lines'][:3]}")
        loads, parse, full, alone, bare = (
            statistics.median(t) for t in (loads_t, parse_t, import_t, store_t, sqlite_t)
        )
        inputs[fmt] = {"fixture": source.name, "copies": copies[fmt], "bytes": size, "records": records,
                       "events": events, "sessions": len(summary["sessions"])}  # fmt: skip
        reference = f"json.loads {mb(size, loads)}"
        speed = f"{records / loads:,.0f} rec/s, {mb(size, loads)}"
        rows.append(
            Row(f"{fmt}: json.loads of each line (reference)", speed, "—", "—", "—", "info", {"seconds": loads_t})
        )
        measured = (  # the last two are bounds on the import, not goals of their own
            ("parser alone", parse, parse_t, True),
            ("`toka import` via daemon", full, import_t, True),
            ("store alone (append in process)", alone, store_t, False),
            ("SQLite alone (same rows, executemany)", bare, sqlite_t, False),
        )
        if against is not None:
            measured += (("`toka import` via daemon, B (--against)", statistics.median(against_t), against_t, True),)
        cpu_rows = []
        for side, prefix in (("A", f"{fmt[:2]}"), ("B", f"{fmt[:2]}b")):
            spent = [CPU[f"{prefix}{rep}"] for rep in range(REPS) if f"{prefix}{rep}" in CPU]
            if not spent:
                continue
            daemon_s = statistics.median(d for d, _ in spent)
            client_s = statistics.median(c for _, c in spent)
            cpu_rows.append(
                Row(
                    f"{fmt}: `toka import` CPU, daemon + command ({side})",
                    f"{daemon_s:.2f} + {client_s:.2f} s",
                    f"json.loads {statistics.median(loads_t):.2f} s",
                    f"{statistics.median(loads_t) / (daemon_s + client_s):.0%}",
                    "—",
                    "info",
                    {"daemon_s": [d for d, _ in spent], "command_s": [c for _, c in spent]},
                )
            )
        for label, seconds, times, targeted in measured:
            ratio = loads / seconds
            result = ("PASS" if ratio >= TARGET else "SHORT") if targeted else "info"
            rows.append(
                Row(
                    f"{fmt}: {label}",
                    f"{events / seconds:,.0f} ev/s, {mb(size, seconds)}",
                    reference,
                    f"{ratio:.0%}",
                    f"≥ {TARGET:.0%}" if targeted else "—",
                    result,
                    {"seconds": times, "events": events, "bytes": size},
                )
            )
        rows += cpu_rows
    under_1mb = [p for p in (TRANSCRIPTS / "claude").glob("*.jsonl") if p.stat().st_size <= 1e6]
    listed = max(under_1mb, key=lambda p: p.stat().st_size)
    replicate(listed, work / "sessions.jsonl", LISTED_SESSIONS, "claude-code")
    log(f"sessions.list: {LISTED_SESSIONS} copies of {listed.name}")
    _, _, home = import_once(work / "sessions.jsonl", work, "ls")
    seconds, count = sessions_list(home)
    per_session = f"{seconds / count * 1e3:,.2f} ms per session"
    data = {"seconds": seconds, "sessions": count}
    rows.append(
        Row(
            f"sessions.list ({count} imported sessions)",
            f"{seconds * 1e3:,.1f} ms",
            per_session,
            "—",
            "—",
            "info",
            data,
        )
    )
    large, inputs["large tool results"] = large_rows(work)
    rows += large
    return rows, inputs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, help="copies of each fixture (default: about 20 MB of each)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--large-only", action="store_true", help="only the transcript of large tool results")
    parser.add_argument("--against", metavar="TREE", help="also import with another source tree's daemon and command")
    args = parser.parse_args(argv)
    copies = {
        fmt: args.copies or max(1, round(20e6 / largest(folder).stat().st_size))
        for fmt, folder in (("claude-code", "claude"), ("codex", "codex"))
        if not args.large_only
    }
    info = machine()
    info.pop("payload_bytes", None)  # the foundation benchmark's synthetic payloads
    work = Path(tempfile.mkdtemp(prefix="tki", dir="/tmp"))
    started = time.perf_counter()
    try:
        if args.large_only:
            rows, large = large_rows(work)
            inputs = {"large tool results": large}
        else:
            rows, inputs = run(copies, work, args.against)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    info["wall_s"] = round(time.perf_counter() - started, 1)
    info["load_at_end"] = round(os.getloadavg()[0], 2)
    if args.json:
        print(json.dumps({"machine": info, "inputs": inputs, "results": [asdict(r) for r in rows]}, indent=2))
        return 0
    print(f"toka import benchmark, {info['date']}")
    print(f"machine: {info['cpu']}, {info['cores']} cores, {info['memory']} RAM; {info['os']}")
    print(
        f"Python {info['python']}, SQLite {info['sqlite']}; took {info['wall_s']} s;"
        f" load average {info['load_at_start']} at start, {info['load_at_end']} at end"
    )
    for fmt, given in inputs.items():
        if "fixture" not in given:
            continue
        print(
            f"{fmt}: {given['fixture']} x {given['copies']} = {given['bytes']:,} B, {given['records']:,} records,"
            f" {given['events']:,} events, {given['sessions']} sessions"
        )
    print()
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
