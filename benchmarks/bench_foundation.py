"""Foundation benchmark: toka's store and daemon against raw SQLite and a bare socket.

Every figure is a ratio against a reference measured in the same run on the same machine, so the
table says how much toka costs over the floor it is built on, not how fast this machine is:

- L: stdlib sqlite3 inserting the same events (same bytes, the same blobs + events tables and
  indexes, created by toka's migrations, each payload in its event's row or in blobs as toka
  puts it), 100 rows per commit, WAL, synchronous NORMAL. Ids, digests and canonical payload
  bytes are computed before the clock starts, so L is SQLite alone; hashing, validation, the
  session projection and the socket are toka's overhead.
- batched ingest through the daemon (events.append, 100 events per request) against L;
- 8 client processes appending one event per request, aggregate rate against L;
- one client appending one event per request: p50 against a bare Unix-socket echo round trip
  of the same request line plus one raw SQLite commit of one event; p99 against 2 ms;
- replay of one 1M-event session, through ``SqliteStore.replay`` and through the daemon
  (events.stream, as Client.iter_events reads it), against a raw SELECT (of the payload in the
  event's row, else joined with blobs) + json.loads of each payload;
  peak RSS of the replaying process (a fresh subprocess) and of the daemon;
- the last 100 events of a session (order=desc, limit=100) with 1M events in the log vs 10k.

Run ``python benchmarks/bench_foundation.py`` (full sizes, about 8 minutes on 2 cores) or with
``--quick`` (100k instead of 1M, fewer iterations); ``--json`` prints the results as JSON.
See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import math
import multiprocessing as mp
import os
import platform
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from daemon.client.autostart import answers
from daemon.client.sync import Client
from daemon.paths import Paths
from daemon.protocol import request
from store.events import NewEvent, canonical_json, digest, header_id, now_us
from store.rows import INLINE_BELOW, packed
from store.search import indexed_text
from store.sqlite.connect import WRITER_CACHE_KIB
from store.sqlite.schema import migrate

HERE = Path(__file__).resolve()
BATCH = 100  # events per commit for L, per request for batched ingest
BUILD_BATCH = 5000  # events per SqliteStore.append when building the replay databases
CLIENTS = 8
AGENT = "bench-agent"
KINDS = ("tool.call", "tool.result", "message")
# Makes a payload of about 230 bytes of canonical JSON: a typical tool call/result record, below
# the store's compression threshold, all distinct (no deduplication helps).
FILLER = "collected 12 items; tests/store/test_sqlite.py ........ ok; tests/daemon ... ok "


# --------------------------------------------------------------------------------------------
# Sizes


@dataclass(frozen=True)
class Sizes:
    ingest_events: int  # per repetition, L and daemon batched ingest alike
    ingest_reps: int
    concurrent_per_client: int
    latency_events: int
    latency_warmup: int
    replay_events: int  # the big log (one session)
    replay_reps: int
    small_events: int  # the small log for the tail query
    tail_reps: int


# The concurrent clients append as many events in all as L and the batched ingest do: L slows
# down as the tables grow, so comparing rates over different sizes would flatter one side.
FULL = Sizes(100_000, 3, 100_000 // CLIENTS, 5_000, 300, 1_000_000, 2, 10_000, 300)
QUICK = Sizes(20_000, 2, 20_000 // CLIENTS, 1_000, 100, 100_000, 2, 10_000, 100)


# --------------------------------------------------------------------------------------------
# Events


def payload(i: int) -> dict[str, Any]:
    return {
        "i": i,
        "tool": "Bash",
        "input": {"command": f"pytest tests/store -k case_{i} -q", "cwd": "/home/dev/src/toka"},
        "exit": i % 2,
        "output": f"{i % 1000} passed in 0.{i % 97:02d}s; " + FILLER,
    }


def event_dict(session: str, i: int) -> dict[str, Any]:
    return {"session": session, "agent": AGENT, "kind": KINDS[i % 3], "payload": payload(i)}


def new_event(session: str, i: int) -> NewEvent:
    return NewEvent(session, KINDS[i % 3], payload(i), AGENT)


@dataclass(frozen=True)
class RawRow:
    """One event as toka writes it, computed before any clock starts: its blob row (None: its
    payload is small, kept in its event row), its event row and the text it adds to the search
    index (None: none)."""

    blob: tuple[Any, ...] | None
    event: tuple[Any, ...]
    text: str | None


def sealed_rows(session: str, start: int, count: int, first_seq: int) -> list[RawRow]:
    """Events [start, start+count) of ``session`` as toka would write them: same canonical
    payload bytes, digest, header id and parent chain, same indexed text."""
    rows = []
    head: str | None = None
    ts0 = now_us()
    for n, i in enumerate(range(start, start + count)):
        body = payload(i)
        data = canonical_json(body)
        name = digest(data)
        parents = (head,) if head else ()
        ts = ts0 + n
        kind = KINDS[i % 3]
        eid = header_id(session, AGENT, kind, ts, parents, name, None)
        inline = data if len(data) < INLINE_BELOW else None  # as store/sqlite/append.py does
        rows.append(
            RawRow(
                None if inline is not None else (name, len(data), *packed(data)),
                (first_seq + n, eid, session, AGENT, kind, ts, ",".join(parents), name, None, inline),
                indexed_text(kind, body),
            )
        )
        head = eid
    return rows


# --------------------------------------------------------------------------------------------
# Small helpers


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def spread(values: list[float], unit: str) -> dict[str, float]:
    """Count, median, p95, mean and max of timings in seconds, in ``unit`` ("ms" or "us"),
    keyed as ``p50_ms`` and so on."""
    scale = {"ms": 1e3, "us": 1e6}[unit]
    return {
        "n": len(values),
        f"p50_{unit}": round(statistics.median(values) * scale, 1),
        f"p95_{unit}": round(percentile(values, 95) * scale, 1),
        f"mean_{unit}": round(statistics.fmean(values) * scale, 1),
        f"max_{unit}": round(max(values) * scale, 1),
    }


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def proc_status(pid: int | str = "self") -> dict[str, int]:
    """VmRSS and VmHWM of a process, in KiB."""
    out = {}
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith(("VmRSS:", "VmHWM:")):
                name, value = line.split(":", 1)
                out[name] = int(value.split()[0])
    return out


def raw_connection(path: Path) -> sqlite3.Connection:
    """A plain stdlib connection configured as toka configures its writer."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA busy_timeout = 5000")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute(f"PRAGMA cache_size = -{WRITER_CACHE_KIB}")
    return db


def raw_schema(path: Path) -> sqlite3.Connection:
    """A database of toka's current schema: every migration of the chain, as toka opens one."""
    db = raw_connection(path)
    migrate(db)
    return db


@dataclass(frozen=True)
class RawCommit:
    """What one raw commit writes, computed before the clock starts. ``full``: besides the blobs
    and events, what toka's append writes into the search index and the session tables."""

    blobs: list[tuple[Any, ...]]
    events: list[tuple[Any, ...]]
    texts: list[tuple[int, str]]
    sessions: list[tuple[Any, ...]]
    agents: list[tuple[str, str, int]]
    kinds: list[tuple[str, str, int]]


def raw_plan(rows: list[RawRow], per_commit: int, full: bool) -> list[RawCommit]:
    plan = []
    for start in range(0, len(rows), per_commit):
        chunk = rows[start : start + per_commit]
        events = [r.event for r in chunk]
        texts, sessions, agents, kinds = [], [], [], []
        if full:
            texts = [(e[0], r.text) for e, r in zip(events, chunk, strict=True) if r.text is not None]
            by_session: dict[str, list[tuple[Any, ...]]] = {}
            for e in events:
                by_session.setdefault(e[2], []).append(e)
            counts: dict[tuple[str, str], int] = {}
            kind_counts: dict[tuple[str, str], int] = {}
            for name, es in by_session.items():
                first_ts, last_ts = min(e[5] for e in es), max(e[5] for e in es)
                sessions.append((name, len(es), es[0][0], es[-1][0], first_ts, last_ts, es[-1][1]))
                for e in es:
                    if e[3] is not None:
                        counts[(name, e[3])] = counts.get((name, e[3]), 0) + 1
                    kind_counts[(name, e[4])] = kind_counts.get((name, e[4]), 0) + 1
            agents = [(s, a, n) for (s, a), n in counts.items()]
            kinds = [(s, k, n) for (s, k), n in kind_counts.items()]
        blobs = [r.blob for r in chunk if r.blob is not None]
        plan.append(RawCommit(blobs, events, texts, sessions, agents, kinds))
    return plan


def raw_write(db: sqlite3.Connection, plan: list[RawCommit]) -> None:
    """The plan's commits, the same statements toka's append runs, with nothing computed."""
    for commit in plan:
        db.execute("BEGIN IMMEDIATE")
        if commit.blobs:
            db.executemany("INSERT OR IGNORE INTO blobs VALUES (?, ?, ?, ?)", commit.blobs)
        db.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", commit.events)
        if commit.texts:
            db.executemany("INSERT INTO search_text VALUES (?, ?)", commit.texts)
            db.executemany("INSERT INTO search_index (rowid, text) VALUES (?, ?)", commit.texts)
        if commit.sessions:
            db.executemany(
                """INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session) DO UPDATE SET
                    events = events + excluded.events, last_seq = excluded.last_seq,
                    first_ts = min(first_ts, excluded.first_ts), last_ts = max(last_ts, excluded.last_ts),
                    head = excluded.head""",
                commit.sessions,
            )
        if commit.agents:
            db.executemany(
                "INSERT INTO session_agents VALUES (?, ?, ?) ON CONFLICT (session, agent)"
                " DO UPDATE SET events = events + excluded.events",
                commit.agents,
            )
        if commit.kinds:
            db.executemany(
                "INSERT INTO session_kinds VALUES (?, ?, ?) ON CONFLICT (session, kind)"
                " DO UPDATE SET events = events + excluded.events",
                commit.kinds,
            )
        db.execute("COMMIT")


def raw_insert(db: sqlite3.Connection, rows: list[RawRow], per_commit: int, full: bool = False) -> None:
    raw_write(db, raw_plan(rows, per_commit, full))


WATCH_NO_AGENTS = "[watch]\nagents = false\n"
# The write path's benchmarks run without semantic recall: its embedder works behind the commit
# on a thread of its own, 10 nicer, and what it costs, and takes from appends, is measured by
# bench_embeddings.py. Counted here, it would be most of a daemon's CPU per event.
NO_EMBEDDINGS = "[recall]\nsemantic = false\n"


class Home:
    """A TOKA_HOME (short path under /tmp: socket paths are limited to 107 bytes)."""

    def __init__(self, root: Path, name: str, embeddings: bool = True) -> None:
        self.root = root / name
        self.root.mkdir(parents=True, exist_ok=True)
        self.paths = Paths(self.root, self.root, self.root / "run")
        # Its daemons follow no agent's folders: the machine's own history would weigh on what is measured.
        self.paths.config_file.write_text(WATCH_NO_AGENTS + ("" if embeddings else NO_EMBEDDINGS))

    @property
    def database(self) -> Path:
        return self.paths.database


class DaemonProcess:
    """``python -m daemon`` in the foreground of a child process (as tests/conftest.py does)."""

    def __init__(self, home: Home, command: list[str] | None = None, settings: dict[str, str] | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TOKA_")}
        env["TOKA_HOME"] = str(home.root)
        env.update(settings or {})  # TOKA_* settings of this daemon
        self.home = home
        self.log_path = home.root / "daemon-stderr.log"
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed when the daemon stops
        self.process = subprocess.Popen(
            command or [sys.executable, "-m", "daemon"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
            env=env,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if answers(home.paths):
                return
            if self.process.poll() is not None:
                raise RuntimeError("daemon exited at start-up: " + self.log_path.read_text()[-2000:])
            time.sleep(0.01)
        self.process.kill()
        raise RuntimeError("daemon did not answer within 30s")

    @property
    def pid(self) -> int:
        return self.process.pid

    def client(self) -> Client:
        return Client(self.home.paths, autostart=False)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()

    def __enter__(self) -> DaemonProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --------------------------------------------------------------------------------------------
# Results


@dataclass
class Row:
    name: str
    toka: str
    reference: str
    ratio: str
    target: str
    result: str  # PASS, SHORT or info
    data: dict[str, Any] = field(default_factory=dict)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "SHORT"


def rate(n: int, seconds: float) -> str:
    return f"{n / seconds:,.0f} ev/s"


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs"


# --------------------------------------------------------------------------------------------
# L: raw sqlite3, 100 rows per commit


# Events per round of the ingest comparison: each round writes this many with L, with L+ and
# through the daemon, one after the other, so that load that comes and goes hits all three.
INGEST_ROUND = 2_000
# The parts of the run, each after the one before: --only picks some.
SECTIONS = frozenset({"ingest", "concurrent", "latency", "replay"})


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


def bench_ingest(work: Path, sizes: Sizes) -> dict[str, Any]:
    """L (blobs and events), L+ (and the search index and session tables) and batched ingest
    through the daemon, each into its own database of toka's current schema, growing alike:
    rounds of INGEST_ROUND events alternate the three, each after a 1,000-event warm-up. Rates
    are events over the sum of each side's round times; ``ratios`` are per round."""
    db_same = raw_schema(work / "raw-same.db")
    db_full = raw_schema(work / "raw-full.db")
    raw_insert(db_same, sealed_rows("warmup", 0, 1_000, 1), BATCH)
    raw_insert(db_full, sealed_rows("warmup", 0, 1_000, 1), BATCH, full=True)
    rows = sealed_rows("ingest", 0, sizes.ingest_events, 1_001)
    plans = {"same": raw_plan(rows, BATCH, False), "full": raw_plan(rows, BATCH, True)}
    dbs = {"same": db_same, "full": db_full}
    events = [event_dict("ingest", i) for i in range(sizes.ingest_events)]
    home = Home(work, "ingest", embeddings=False)
    per_round = INGEST_ROUND // BATCH
    times: dict[str, list[float]] = {"same": [], "full": [], "daemon": []}
    loads = [load_average()]
    with DaemonProcess(home) as daemon, daemon.client() as client:
        for start in range(0, 1_000, BATCH):
            client.call("events.append", events=[event_dict("warmup", i) for i in range(start, start + BATCH)])
        for first in range(0, len(plans["same"]), per_round):
            for side in ("same", "full"):
                began = time.perf_counter()
                raw_write(dbs[side], plans[side][first : first + per_round])
                times[side].append(time.perf_counter() - began)
            began = time.perf_counter()
            for n in range(first, min(first + per_round, len(plans["same"]))):
                client.call("events.append", events=events[n * BATCH : (n + 1) * BATCH])
            times["daemon"].append(time.perf_counter() - began)
    loads.append(load_average())
    for db in dbs.values():
        db.close()
    shutil.rmtree(home.root, ignore_errors=True)
    total = {side: sizes.ingest_events / sum(t) for side, t in times.items()}
    return {
        "rates": total,
        "ratios": {
            side: statistics.median(r / d for r, d in zip(times[side], times["daemon"], strict=True))
            for side in ("same", "full")
        },
        "load": loads,
        "rounds": len(times["daemon"]),
    }


def raw_rate(work: Path, sizes: Sizes, full: bool) -> float:
    """Events/s of raw sqlite3 writing the same number of events as the concurrent clients do,
    into a fresh database, after a 1,000-event warm-up."""
    path = work / f"raw-rate-{'full' if full else 'same'}.db"
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")
    db = raw_schema(path)
    raw_insert(db, sealed_rows("warmup", 0, 1_000, 1), BATCH, full)
    plan = raw_plan(sealed_rows("ingest", 0, sizes.ingest_events, 1_001), BATCH, full)
    start = time.perf_counter()
    raw_write(db, plan)
    elapsed = time.perf_counter() - start
    db.close()
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")
    return sizes.ingest_events / elapsed


# --------------------------------------------------------------------------------------------
# 8 concurrent clients, one event per request


def _concurrent_worker(home_root: str, index: int, count: int, barrier: Any, results: Any) -> None:
    paths = Paths(Path(home_root), Path(home_root), Path(home_root) / "run")
    session = f"client-{index}"
    events = [event_dict(session, i) for i in range(count + 20)]
    with Client(paths, autostart=False) as client:
        for event in events[:20]:
            client.call("events.append", events=[event])
        barrier.wait()
        start = time.perf_counter()  # CLOCK_MONOTONIC: comparable across processes
        for event in events[20:]:
            client.call("events.append", events=[event])
        end = time.perf_counter()
    results.put((index, start, end, count))


def concurrent_once(work: Path, sizes: Sizes, rep: int) -> dict[str, Any]:
    """Aggregate rate of CLIENTS processes, each appending one event per request, started
    together on a barrier; the clock runs from the first start to the last finish."""
    home = Home(work, f"concurrent{rep}", embeddings=False)
    ctx = mp.get_context("spawn")
    with DaemonProcess(home) as daemon:
        barrier = ctx.Barrier(CLIENTS)
        results = ctx.Queue()
        workers = [
            ctx.Process(
                target=_concurrent_worker,
                args=(str(home.root), i, sizes.concurrent_per_client, barrier, results),
            )
            for i in range(CLIENTS)
        ]
        for worker in workers:
            worker.start()
        done = [results.get(timeout=600) for _ in workers]
        for worker in workers:
            worker.join()
        with daemon.client() as client:
            commits = client.call("status")["commits"]
    shutil.rmtree(home.root, ignore_errors=True)
    total = sum(d[3] for d in done)
    elapsed = max(d[2] for d in done) - min(d[1] for d in done)
    return {
        "events": total,
        "seconds": elapsed,
        "rate": total / elapsed,
        "events_per_commit": (total + 20 * CLIENTS) / commits if commits else None,
    }


def bench_concurrent(work: Path, sizes: Sizes) -> dict[str, Any]:
    """The concurrent clients' rate, each run between runs of L and L+ writing as many events,
    so that each ratio is of neighbours in time; the median run by ratio to L+."""
    runs = []
    for rep in range(sizes.ingest_reps):
        load = load_average()
        same, full = raw_rate(work, sizes, False), raw_rate(work, sizes, True)
        run = concurrent_once(work, sizes, rep)
        same, full = (same + raw_rate(work, sizes, False)) / 2, (full + raw_rate(work, sizes, True)) / 2
        runs.append(
            {
                **run,
                "same": same,
                "full": full,
                "ratio_same": run["rate"] / same,
                "ratio_full": run["rate"] / full,
                "load": [load, load_average()],
            }
        )
    middle = sorted(runs, key=lambda r: r["ratio_full"])[len(runs) // 2]
    return {**middle, "reps": [(r["rate"], r["ratio_same"], r["ratio_full"]) for r in runs]}


# --------------------------------------------------------------------------------------------
# Sequential single-event latency, and its reference (echo round trip + one raw commit)


def _echo_server(path: str, ready: Any) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while line := await reader.readline():
                writer.write(line)
                await writer.drain()
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_unix_server(handle, path=path, limit=4 * 1024 * 1024)
        ready.set()
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def start_echo_server(path: str) -> mp.process.BaseProcess:
    """The reference server: an asyncio Unix-socket echo server in its own (spawned) process,
    ready when this returns. Terminate and join it when done."""
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    server = ctx.Process(target=_echo_server, args=(path, ready), daemon=True)
    server.start()
    ready.wait(30)
    return server


def bench_latency(work: Path, sizes: Sizes) -> dict[str, list[float]]:
    """Sequential single-event appends through the daemon, and the two parts of their
    reference: a round trip of the same request line through an asyncio echo server in its own
    process (as the daemon is), and one raw sqlite3 commit of one event (its blob and its row).
    The three run in alternating rounds so that drift in machine load hits all of them alike."""
    import socket

    rounds = 5
    total = sizes.latency_warmup + sizes.latency_events
    lines = [request(n, "events.append", {"events": [event_dict("latency", n)]}) for n in range(total)]
    events = [event_dict("latency", n) for n in range(total)]
    raw_rows = sealed_rows("latency", 0, total, 1_001)

    echo_path = str(work / "echo.sock")
    server = start_echo_server(echo_path)
    home = Home(work, "latency", embeddings=False)
    db = raw_schema(work / "raw-commit.db")
    raw_insert(db, sealed_rows("warmup", 0, 1_000, 1), BATCH)
    out: dict[str, list[float]] = {"echo": [], "commit": [], "daemon": []}
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(echo_path)
        reader = sock.makefile("rb")
        with DaemonProcess(home) as daemon, daemon.client() as client:

            def echo(n: int) -> None:
                sock.sendall(lines[n])
                reader.readline()

            def commit(n: int) -> None:
                blob, event = raw_rows[n].blob, raw_rows[n].event
                db.execute("BEGIN IMMEDIATE")
                if blob is not None:
                    db.execute("INSERT OR IGNORE INTO blobs VALUES (?, ?, ?, ?)", blob)
                db.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", event)
                db.execute("COMMIT")

            def append(n: int) -> None:
                client.call("events.append", events=[events[n]])

            steps = (("echo", echo), ("commit", commit), ("daemon", append))
            for _, fn in steps:
                for n in range(sizes.latency_warmup):
                    fn(n)
            per_round = math.ceil(sizes.latency_events / rounds)
            for r in range(rounds):
                chunk = range(
                    sizes.latency_warmup + r * per_round,
                    min(total, sizes.latency_warmup + (r + 1) * per_round),
                )
                for name, fn in steps:
                    times = out[name]
                    for n in chunk:
                        start = time.perf_counter()
                        fn(n)
                        times.append(time.perf_counter() - start)
        reader.close()
        sock.close()
    finally:
        db.close()
        server.terminate()
        server.join()
        shutil.rmtree(home.root, ignore_errors=True)
    return out


# --------------------------------------------------------------------------------------------
# Building the logs for replay and tail queries


async def _build(path: Path, session: str, count: int) -> None:
    from store.sqlite.store import SqliteStore

    store = await SqliteStore.open(path)
    try:
        for start in range(0, count, BUILD_BATCH):
            stop = min(count, start + BUILD_BATCH)
            await store.append([new_event(session, i) for i in range(start, stop)])
    finally:
        await store.close()


def build_log(home: Home, session: str, count: int) -> float:
    """Fill home's database with ``count`` events of one session; returns seconds (0 if cached)."""
    marker = home.root / f"built-{session}-{count}.ok"
    if marker.exists() and home.database.exists():
        return 0.0
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{home.database}{suffix}")
    start = time.perf_counter()
    asyncio.run(_build(home.database, session, count))
    elapsed = time.perf_counter() - start
    marker.touch()
    return elapsed


def warm_page_cache(path: Path) -> None:
    with open(path, "rb") as handle:
        while handle.read(16 * 1024 * 1024):
            pass


# --------------------------------------------------------------------------------------------
# Replay, each in a fresh subprocess so that its peak RSS is the replay's


def _child_replay(mode: str, target: str, session: str) -> dict[str, Any]:
    """Runs in the child: replay ``session`` and throw each event away."""
    base = proc_status()
    count = 0
    if mode == "raw":
        db = sqlite3.connect(target, isolation_level=None)
        db.execute("PRAGMA query_only = ON")
        start = time.perf_counter()
        for row in db.execute(
            "SELECT e.seq, e.id, e.session, e.agent, e.kind, e.ts, e.parents, e.digest, e.key,"
            " coalesce(b.codec, 0), coalesce(e.payload, b.data) FROM events e"
            " LEFT JOIN blobs b ON e.payload IS NULL AND b.digest = e.digest"
            " WHERE e.session = ? ORDER BY e.seq",
            (session,),
        ):
            json.loads(row[10])
            count += 1
        elapsed = time.perf_counter() - start
        db.close()
    elif mode == "store":
        from store.sqlite.store import SqliteStore

        async def run() -> tuple[int, float]:
            store = await SqliteStore.open(Path(target))
            n = 0
            begin = time.perf_counter()
            async for _event in store.replay(session):
                n += 1
            took = time.perf_counter() - begin
            await store.close()
            return n, took

        count, elapsed = asyncio.run(run())
    elif mode == "daemon":
        root = Path(target)
        client = Client(Paths(root, root, root / "run"), autostart=False)
        start = time.perf_counter()
        for _event in client.iter_events(session=session):
            count += 1
        elapsed = time.perf_counter() - start
        client.close()
    else:
        raise SystemExit(f"unknown replay mode {mode}")
    peak = proc_status()
    return {
        "events": count,
        "seconds": elapsed,
        "rss_before_kib": base["VmRSS"],
        "peak_rss_kib": peak["VmHWM"],
    }


def replay_in_child(mode: str, target: Path, session: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, str(HERE), "--_child-replay", mode, str(target), session],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


# --------------------------------------------------------------------------------------------
# The last 100 events of a session


async def _tail_store(paths: dict[str, Path], sessions: dict[str, str], reps: int) -> dict[str, list[float]]:
    from store.base import EventQuery
    from store.sqlite.store import SqliteStore

    stores = {name: await SqliteStore.open(path) for name, path in paths.items()}
    times: dict[str, list[float]] = {name: [] for name in paths}
    try:
        for n in range(reps + 20):
            for name, store in stores.items():
                query = EventQuery(session=sessions[name], order="desc", limit=100)
                start = time.perf_counter()
                events = await store.query(query)
                if n >= 20:
                    times[name].append(time.perf_counter() - start)
                assert len(events) == 100
    finally:
        for store in stores.values():
            await store.close()
    return times


def tail_daemon(clients: dict[str, Client], sessions: dict[str, str], reps: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in clients}
    for n in range(reps + 20):
        for name, client in clients.items():
            start = time.perf_counter()
            page = client.call("events.query", session=sessions[name], order="desc", limit=100)
            if n >= 20:
                times[name].append(time.perf_counter() - start)
            assert len(page["events"]) == 100
    return times


# --------------------------------------------------------------------------------------------
# The run


def machine() -> dict[str, Any]:
    model = platform.processor() or "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    memory = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "load_at_start": round(os.getloadavg()[0], 2),
        "cpu": model,
        "cores": os.cpu_count(),
        "memory": memory,
        "os": platform.platform(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "payload_bytes": len(canonical_json(payload(12345))),
    }


def described(info: dict[str, Any]) -> dict[str, Any]:
    """The first fields of a whole-process benchmark's result: when, on what, with which Python."""
    return {
        "date": info["date"],
        "machine": f"{info['cpu']}, {info['cores']} cores, {info['memory']} RAM; {info['os']}",
        "python": info["python"],
    }


def show(result: dict[str, Any], as_json: bool) -> None:
    """A benchmark's result as JSON, or as one aligned ``name: value`` line each."""
    if as_json:
        print(json.dumps(result, indent=2))
        return
    width = max(map(len, result))
    for name, value in result.items():
        print(f"{name:>{width}}: {value}")


def ingest_rows(work: Path, sizes: Sizes) -> list[Row]:
    rows: list[Row] = []
    log(
        f"L, L+ (raw sqlite3, {BATCH} per commit) and batched ingest through the daemon,"
        f" {sizes.ingest_events:,} events each, alternating rounds of {INGEST_ROUND:,}"
    )
    ingest = bench_ingest(work, sizes)
    rates, ratios, load = ingest["rates"], ingest["ratios"], ingest["load"]
    names = (("same", "L: raw sqlite3, same tables"), ("full", "L+: raw sqlite3, same tables + index + projections"))
    for side, name in names:
        rows.append(
            Row(
                f"{name}, 100/commit (reference)",
                f"{rates[side]:,.0f} ev/s",
                "—",
                "—",
                "—",
                f"info (load {load[0]}–{load[1]})",
                {"events_per_s": rates[side], "load": load},
            )
        )
    for side, label, target in (("same", "L", 0.70), ("full", "L+", 0.80)):
        rows.append(
            Row(
                f"Batched ingest via daemon (100/request) vs {label}",
                f"{rates['daemon']:,.0f} ev/s",
                f"{label} {rates[side]:,.0f} ev/s",
                f"{ratios[side]:.0%}",
                f"≥ {target:.0%}",
                f"{verdict(ratios[side] >= target)} (load {load[0]}–{load[1]})",
                {"events_per_s": rates["daemon"], "ratio": ratios[side], "rounds": ingest["rounds"], "load": load},
            )
        )

    return rows


def latency_rows(work: Path, sizes: Sizes) -> list[Row]:
    rows: list[Row] = []

    log(f"sequential latency: echo, raw commit, daemon ({sizes.latency_events:,} each, interleaved)")
    load = load_average()
    lat = bench_latency(work, sizes)
    load = f"load {load}–{load_average()}"
    echo, commit, appends = lat["echo"], lat["commit"], lat["daemon"]
    reference = statistics.median(echo) + statistics.median(commit)
    p50, p99 = statistics.median(appends), percentile(appends, 99)
    ratio = p50 / reference
    rows.append(
        Row(
            "1 client sequential append: p50",
            us(p50),
            f"{us(reference)} (echo {us(statistics.median(echo))} + commit {us(statistics.median(commit))})",
            f"{ratio:.2f}×",
            "≤ 1.5×",
            f"{verdict(ratio <= 1.5)} ({load})",
            {
                "p50_s": p50,
                "reference_s": reference,
                "echo_p50_s": statistics.median(echo),
                "commit_p50_s": statistics.median(commit),
                "ratio": ratio,
            },
        )
    )
    rows.append(
        Row(
            "1 client sequential append: p99",
            us(p99),
            f"echo {us(percentile(echo, 99))} + commit {us(percentile(commit, 99))}",
            "—",
            "≤ 2 ms",
            f"{verdict(p99 <= 0.002)} ({load})",
            {
                "p99_s": p99,
                "p99_9_s": percentile(appends, 99.9),
                "max_s": max(appends),
                "over_1ms": sum(t > 0.001 for t in appends),
                "count": len(appends),
                "echo_p99_s": percentile(echo, 99),
                "commit_p99_s": percentile(commit, 99),
                "commit_max_s": max(commit),
            },
        )
    )

    return rows


def run(sizes: Sizes, work: Path, skip_daemon_replay: bool, sections: set[str] = SECTIONS) -> list[Row]:
    rows: list[Row] = []
    if "ingest" in sections:
        rows += ingest_rows(work, sizes)
    if "concurrent" in sections:
        log(
            f"{CLIENTS} concurrent clients x {sizes.concurrent_per_client:,} single-event appends x {sizes.ingest_reps}"
        )
        conc = bench_concurrent(work, sizes)
        for side, label, target in (("same", "L", 0.25), ("full", "L+", 0.35)):
            ratio = conc[f"ratio_{side}"]
            rows.append(
                Row(
                    f"{CLIENTS} concurrent clients, 1 event/request, vs {label}",
                    f"{conc['rate']:,.0f} ev/s",
                    f"{label} {conc[side]:,.0f} ev/s",
                    f"{ratio:.0%}",
                    f"≥ {target:.0%}",
                    f"{verdict(ratio >= target)} (load {conc['load'][0]}–{conc['load'][1]})",
                    {**conc, "ratio": ratio},
                )
            )
    if "latency" in sections:
        rows += latency_rows(work, sizes)
    if "replay" not in sections:
        return rows
    big = Home(work, "big", embeddings=False)
    small = Home(work, "small", embeddings=False)
    log(f"building a {sizes.replay_events:,}-event session via SqliteStore.append({BUILD_BATCH})")
    built = build_log(big, "big", sizes.replay_events)
    ref_rate = next((r.data["events_per_s"] for r in rows if r.name.startswith("L:")), None)
    if built and ref_rate:
        rows.append(
            Row(
                f"Build {sizes.replay_events:,}-event log (store.append, {BUILD_BATCH}/call)",
                rate(sizes.replay_events, built),
                f"L {ref_rate:,.0f} ev/s",
                f"{sizes.replay_events / built / ref_rate:.0%}",
                "—",
                "info",
                {"seconds": built},
            )
        )
    log(f"building a {sizes.small_events:,}-event session")
    build_log(small, "small", sizes.small_events)
    warm_page_cache(big.database)

    n = sizes.replay_events
    label = f"{n // 1000:,}k" if n < 1_000_000 else f"{n / 1e6:g}M"
    mib = lambda kib: f"{kib / 1024:,.0f} MiB"  # noqa: E731
    modes = ["raw", "store"] + ([] if skip_daemon_replay else ["daemon"])
    replays: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
    with DaemonProcess(big) as daemon:
        daemon_start = proc_status(daemon.pid)
        for rep in range(sizes.replay_reps):
            for mode in modes:
                log(f"replay {label} ({rep + 1}/{sizes.replay_reps}): {mode}")
                target = big.root if mode == "daemon" else big.database
                result = replay_in_child(mode, target, "big")
                assert result["events"] == n, result
                replays[mode].append(result)
        daemon_end = proc_status(daemon.pid)
    best = {mode: min(runs, key=lambda r: r["seconds"]) for mode, runs in replays.items()}
    raw = best["raw"]
    for mode, name in (("store", "SqliteStore.replay"), ("daemon", "daemon events.stream (Client.iter_events)")):
        if mode not in best:
            continue
        ratio = raw["seconds"] / best[mode]["seconds"]
        rows.append(
            Row(
                f"Replay {label}-event session: {name}",
                rate(n, best[mode]["seconds"]),
                f"raw {rate(n, raw['seconds'])}",
                f"{ratio:.0%}",
                "≥ 50%",
                verdict(ratio >= 0.5),
                {
                    "best": best[mode],
                    "raw": raw,
                    "ratio": ratio,
                    "reps_s": [r["seconds"] for r in replays[mode]],
                    "raw_reps_s": [r["seconds"] for r in replays["raw"]],
                },
            )
        )
    rows.append(
        Row(
            "  peak RSS of the replaying process (store)",
            mib(best["store"]["peak_rss_kib"]),
            f"raw {mib(raw['peak_rss_kib'])}",
            "—",
            "flat",
            "info",
            {"store_rss_before_kib": best["store"]["rss_before_kib"], "raw_rss_before_kib": raw["rss_before_kib"]},
        )
    )
    if "daemon" in best:
        rows.append(
            Row(
                "  peak RSS: client / daemon",
                f"{mib(best['daemon']['peak_rss_kib'])} / {mib(daemon_end['VmHWM'])}",
                f"daemon at start {mib(daemon_start['VmRSS'])}",
                "—",
                "flat",
                "info",
                {
                    "client_peak_kib": best["daemon"]["peak_rss_kib"],
                    "daemon_peak_kib": daemon_end["VmHWM"],
                    "daemon_start_kib": daemon_start["VmRSS"],
                },
            )
        )

    sessions = {"big": "big", "small": "small"}
    log("tail query (last 100, desc) via the daemon, both logs, alternating")
    with (
        DaemonProcess(big) as big_daemon,
        DaemonProcess(small) as small_daemon,
        big_daemon.client() as big_client,
        small_daemon.client() as small_client,
    ):
        via_daemon = tail_daemon({"big": big_client, "small": small_client}, sessions, sizes.tail_reps)
    log("tail query via the store, both logs, alternating")
    via_store = asyncio.run(_tail_store({"big": big.database, "small": small.database}, sessions, sizes.tail_reps))
    small_label = f"{sizes.small_events // 1000}k"
    for how, times in (("store", via_store), ("daemon", via_daemon)):
        b, s = statistics.median(times["big"]), statistics.median(times["small"])
        ratio = b / s
        rows.append(
            Row(
                f"Last 100 events of a session, {label} vs {small_label} log ({how})",
                us(b),
                f"{small_label}: {us(s)}",
                f"{ratio:.2f}×",
                "≤ 1.5×",
                verdict(ratio <= 1.5),
                {"big_s": b, "small_s": s, "ratio": ratio},
            )
        )
    return rows


def table(rows: list[Row]) -> str:
    head = ("Measurement", "Toka", "Reference", "Ratio", "Target", "Result")
    body = [(r.name, r.toka, r.reference, r.ratio, r.target, r.result) for r in rows]
    widths = [max(len(str(line[i])) for line in [head, *body]) for i in range(len(head))]

    def fmt(line: tuple[str, ...]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([fmt(head), rule, *(fmt(line) for line in body)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="100k-event replay, fewer iterations")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--save", type=Path, help="also write the results as JSON to this file")
    parser.add_argument("--workdir", type=Path, help="keep databases here and reuse the built logs")
    parser.add_argument("--replay-events", type=int, help="override the size of the big log")
    parser.add_argument("--skip-daemon-replay", action="store_true", help="skip replay through the daemon")
    parser.add_argument("--only", help="comma-separated sections to run: " + ", ".join(sorted(SECTIONS)))
    parser.add_argument("--_child-replay", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args._child_replay:
        print(json.dumps(_child_replay(*args._child_replay)))
        return 0

    sizes = QUICK if args.quick else FULL
    if args.replay_events:
        sizes = Sizes(**{**asdict(sizes), "replay_events": args.replay_events})
    info = machine()
    if args.workdir:
        work = args.workdir.absolute()
        work.mkdir(parents=True, exist_ok=True)
        cleanup = False
    else:
        work = Path(tempfile.mkdtemp(prefix="tkb", dir="/tmp"))
        cleanup = True
    started = time.perf_counter()
    try:
        sections = set(args.only.split(",")) if args.only else set(SECTIONS)
        rows = run(sizes, work, args.skip_daemon_replay, sections)
    finally:
        if cleanup:
            shutil.rmtree(work, ignore_errors=True)
    info["wall_s"] = round(time.perf_counter() - started, 1)
    info["load_at_end"] = round(os.getloadavg()[0], 2)
    info["sizes"] = asdict(sizes)
    document = json.dumps({"machine": info, "results": [asdict(r) for r in rows]}, indent=2, default=str)
    if args.save:
        args.save.write_text(document + "\n")
    if args.json:
        print(document)
        return 0
    print(f"toka foundation benchmark, {info['date']}")
    print(f"machine: {info['cpu']}, {info['cores']} cores, {info['memory']} RAM; {info['os']}")
    print(
        f"Python {info['python']}, SQLite {info['sqlite']}; payload {info['payload_bytes']} bytes;"
        f" {'quick' if args.quick else 'full'} sizes; took {info['wall_s']} s;"
        f" load average {info['load_at_start']} at start, {info['load_at_end']} at end"
    )
    print()
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
