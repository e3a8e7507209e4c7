"""Profile the daemon under one of the foundation benchmark's workloads.

cProfile sees one thread only, and the daemon works on three: the event loop, and the writer
and reader connections' threads (aiosqlite). This runs ``python -m daemon`` with a profiler on
the event loop and one more on each connection thread (the store functions it runs there are
wrapped), drives the chosen workload from other processes, stops the daemon with SIGTERM and
prints the top functions of each thread by own time.

    python benchmarks/profile_daemon.py batched|concurrent|sequential|pipelined|replay|import [--top 25] [--postgres]

``--postgres`` runs the daemon on a throw-away PostgreSQL server (tests/postgres_server.py, its
default durability) instead of SQLite; the PostgreSQL backend works on the event loop only.

``import`` runs ``toka import``'s own code (daemon.client.transfer) over the largest Claude Code fixture,
replicated as bench_import.py does (``--events`` is then the number of copies).

Profiling slows Python code down by 1.5-3x, so read the shares, not the absolute times. With
``TOKA_PROFILE_CPU=1`` each function is charged its thread's CPU time instead of the wall time.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


# With TOKA_PROFILE_CPU=1 each function is charged the CPU time of its thread, not the wall time:
# a socket send that wakes the client and loses the core to it then costs what it costs.
TIMER = (time.thread_time,) if os.environ.get("TOKA_PROFILE_CPU") == "1" else ()
PIPELINE = 32  # requests in flight for the pipelined workload, as bench_peers.py


def serve(out_dir: str) -> None:
    """Runs in the daemon process: the daemon, profiled on every thread that does its work."""
    import store.sqlite.store as sqlite_backend
    from daemon.server.main import run_foreground

    profiles: dict[int, tuple[str, cProfile.Profile]] = {}
    lock = threading.Lock()
    original = sqlite_backend.on_thread

    def thread_profile() -> cProfile.Profile:
        ident = threading.get_ident()
        with lock:
            if ident not in profiles:
                profiles[ident] = (f"thread-{len(profiles)}", cProfile.Profile(*TIMER))
            return profiles[ident][1]

    async def profiled_run(conn, path, fn, *args, **kwargs):  # type: ignore[no-untyped-def]
        def wrapped(*inner):  # type: ignore[no-untyped-def]
            prof = thread_profile()
            prof.enable()
            try:
                return fn(*inner)
            finally:
                prof.disable()

        wrapped.__name__ = getattr(fn, "__name__", "fn")
        return await original(conn, path, wrapped, *args, **kwargs)

    sqlite_backend.on_thread = profiled_run
    main_profile = cProfile.Profile(*TIMER)
    main_profile.enable()
    try:
        # Not main(), whose exit ends the process at once when a library's thread is alive.
        run_foreground({})
    finally:
        main_profile.disable()
        main_profile.dump_stats(os.path.join(out_dir, "loop.prof"))
        for name, prof in profiles.values():
            prof.dump_stats(os.path.join(out_dir, f"{name}.prof"))


def report(path: Path, top: int) -> str:
    buffer = io.StringIO()
    stats = pstats.Stats(str(path), stream=buffer)
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    return buffer.getvalue()


def drive(workload: str, top: int, events: int, postgres: bool, save: str | None = None) -> None:
    import bench_foundation as bench

    work = Path(tempfile.mkdtemp(prefix="tkp", dir="/tmp"))
    out = work / "prof"
    out.mkdir()
    server = None
    settings: dict[str, str] = {}
    if postgres:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        import bench_postgres
        import postgres_server

        server = postgres_server.start(durable=True)
        settings = bench_postgres.postgres_settings(bench_postgres.fresh_database(server.url, "profiled"))
    try:
        home = bench.Home(work, "home", embeddings=False)
        sizes = bench.Sizes(events, 1, max(1, events // bench.CLIENTS), events, 50, events, 1, 10_000, 50)
        if workload == "replay":
            bench.build_log(home, "big", events)
        if workload == "import":
            import bench_import

            transcript = work / "import.jsonl"
            bench_import.replicate(bench_import.largest("claude"), transcript, events, "claude-code")
        command = [sys.executable, str(Path(__file__).resolve()), "--serve", str(out)]
        with bench.DaemonProcess(home, command, settings) as daemon:
            start = time.perf_counter()
            if workload == "batched":
                payloads = [bench.event_dict("ingest", i) for i in range(events)]
                with daemon.client() as client:
                    for n in range(0, events, bench.BATCH):
                        client.call("events.append", events=payloads[n : n + bench.BATCH])
            elif workload == "sequential":
                with daemon.client() as client:
                    for i in range(events):
                        client.call("events.append", events=[bench.event_dict("seq", i)])
            elif workload == "pipelined":
                with daemon.client() as client:  # as bench_peers.py's pipelined writer
                    pending: list[int] = []
                    for i in range(events):
                        pending.append(client.submit("events.append", events=[bench.event_dict("pipe", i)]))
                        if len(pending) >= PIPELINE:
                            client.result(pending.pop(0))
                    for request_id in pending:
                        client.result(request_id)
            elif workload == "concurrent":
                import multiprocessing as mp

                ctx = mp.get_context("spawn")
                barrier, results = ctx.Barrier(bench.CLIENTS), ctx.Queue()
                workers = [
                    ctx.Process(
                        target=bench._concurrent_worker,
                        args=(str(home.root), i, sizes.concurrent_per_client, barrier, results),
                    )
                    for i in range(bench.CLIENTS)
                ]
                for worker in workers:
                    worker.start()
                for _ in workers:
                    results.get(timeout=600)
                for worker in workers:
                    worker.join()
            elif workload == "replay":
                print(bench.replay_in_child("daemon", home.root, "big"), file=sys.stderr)
            elif workload == "import":
                from daemon.client.transfer import import_files

                with daemon.client() as client:
                    events = import_files(client, [transcript], "claude-code").events
            elapsed = time.perf_counter() - start
        print(f"{workload}: {events:,} events in {elapsed:.2f}s under the profiler\n")
        for path in sorted(out.glob("*.prof")):
            print(f"==== {path.stem} " + "=" * 60)
            print(report(path, top))
            if save is not None:  # for pstats' callers and callees
                Path(save).mkdir(parents=True, exist_ok=True)
                shutil.copy(path, Path(save) / path.name)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if server is not None:
            postgres_server.stop(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", choices=["batched", "concurrent", "sequential", "pipelined", "replay", "import"])
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--events", type=int, help="events to send (default depends on workload)")
    parser.add_argument("--postgres", action="store_true", help="the daemon on a throw-away PostgreSQL server")
    parser.add_argument("--save", help="a folder to keep the profiles in")
    args = parser.parse_args()
    default = {
        "batched": 50_000,
        "concurrent": 8_000,
        "sequential": 5_000,
        "pipelined": 10_000,
        "replay": 200_000,
        "import": 6,
    }
    drive(args.workload, args.top, args.events or default[args.workload], args.postgres, args.save)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        out_dir = sys.argv[2]
        sys.argv = [sys.argv[0]]
        serve(out_dir)
    else:
        main()
