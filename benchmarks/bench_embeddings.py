"""Semantic recall's costs, each against a reference measured in the same run.

    .venv/bin/python benchmarks/bench_embeddings.py [--vectors N] [--ingest-events N] [--rounds N] [--model M]
        [--postgres] [--json]

- **embedding throughput**: texts per second through the embedder the daemon uses
  (daemon/recall/model.py, batches of 64) for WordLlama l2_supercat at 256, 128 and 64
  dimensions, against the full-text tokenizer (store/search.py ``tokens``) over the same texts:
  what the index already pays for every text.
- **ingest with embeddings on against off**: two daemons in temporary homes, one with
  ``recall.semantic = true`` and one with it false, alternating rounds; each round appends
  ``--ingest-events`` messages of 40 to 120 words (all embedded) in requests of 100 through the
  client and measures the appends alone, the embedder running beside them. Target: on ≥ 95% of
  off. Also reported: how long after the last append the embedder caught up.
- **single appends while the embedder is busy** (``--busy BACKLOG``): a daemon whose embedder
  works through BACKLOG long messages takes rounds of 2,000 single appends of 5-word messages (which
  no model embeds), alternating with a daemon with semantic recall off: what the embedder's thread,
  at its lower priority, takes from the write path. The backlog left after each round is reported.
- **query p50 at N embedded events** (``--vectors``, default 100,000): a SQLite log of N messages
  whose vectors are stored directly (random unit vectors of 256 dimensions: the cost of a search
  does not depend on what the vectors mean), then ``VectorIndex.nearest`` for 60 neighbours (what a
  hybrid search of 20 hits asks) in every session and in one session, against a full-text search
  of a word in 1% of the events on the same store; and the query's embedding alone. With numpy
  where this Python's sqlite3 loads no extension, else sqlite-vec (both are reported when both run).
  PostgreSQL is measured when ``TOKATEST_POSTGRES_URL`` names a server with pgvector, or with
  ``--postgres`` on a throw-away server with its default durability (tests/postgres_server.py, as
  the tests start theirs: the system's binaries, or the test extra's pgserver when the system's
  server has no pgvector), in a database of its own; the same log as SQLite's.

``--model`` names the ``recall.embedding_model`` measured (default: toka's, the pair of
all-MiniLM-L6-v2 and WordLlama): the "on" daemon of the ingest embeds with it, its throughput is
measured beside WordLlama's (on 320 texts when it is not WordLlama alone), and the queries embed
with it over random vectors of its dimensions.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from daemon.recall.model import embedder_environment  # noqa: E402
from daemon.recall.settings import DEFAULT_MODEL  # noqa: E402

embedder_environment()  # as the daemon runs numpy and the tokenizers: one thread each
TOKA = Path(sys.executable).parent / "toka"
VOCABULARY = [
    "queue",
    "stream",
    "broker",
    "redis",
    "worker",
    "retry",
    "export",
    "order",
    "invoice",
    "login",
    "session",
    "cookie",
    "timeout",
    "page",
    "database",
    "migration",
    "schema",
    "column",
    "index",
    "table",
    "query",
    "cache",
    "server",
    "client",
    "request",
    "response",
    "error",
    "test",
    "build",
    "deploy",
    "release",
    "branch",
    "commit",
    "review",
    "pipeline",
    "config",
    "setting",
    "path",
    "file",
    "folder",
    "module",
    "function",
    "class",
    "method",
    "type",
    "value",
    "key",
    "token",
    "budget",
    "context",
    "handoff",
    "note",
    "decision",
    "summary",
    "agent",
]
# The daemons measured follow no agent's folders: this machine's ~/.claude and ~/.codex would be
# imported by the first daemon to start, in the middle of a round.
NOT_WATCHING = "[watch]\nagents = false\n"
FILLER = ["the", "a", "of", "to", "in", "and", "for", "with", "on", "that", "is", "was", "it", "we", "this"]


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(VOCABULARY) if rng.random() < 0.6 else rng.choice(FILLER) for _ in range(words))


def texts(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [sentence(rng, rng.randint(40, 120)) for _ in range(count)]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def throughput(model: str) -> dict[str, Any]:
    from daemon.recall.model import load_embedder
    from store.search import tokens

    sample = texts(5000)
    started = time.perf_counter()
    for text in sample:
        tokens(text)
    tokenizer = len(sample) / (time.perf_counter() - started)
    found: dict[str, Any] = {"tokenizer_texts_per_s": round(tokenizer)}
    for dims in (256, 128, 64):
        embedder = load_embedder(f"wordllama/l2_supercat-{dims}")
        embedder.embed(sample[:64])  # warm
        started = time.perf_counter()
        for start in range(0, len(sample), 64):
            embedder.embed(sample[start : start + 64])
        rate = len(sample) / (time.perf_counter() - started)
        found[f"wordllama_{dims}_texts_per_s"] = round(rate)
        found[f"wordllama_{dims}_vs_tokenizer"] = round(rate / tokenizer, 3)
    if not model.startswith("wordllama/"):  # a model tens of times slower: fewer texts
        embedder = load_embedder(model)
        batch = embedder.most_per_batch or 64  # as the daemon's embedder cuts its batches
        embedder.embed(sample[:batch])
        started = time.perf_counter()
        for start in range(0, 320, batch):
            embedder.embed(sample[start : start + batch])
        rate = 320 / (time.perf_counter() - started)
        found[f"{model}_texts_per_s"] = round(rate, 1)
        found[f"{model}_vs_tokenizer"] = round(rate / tokenizer, 5)
    return found


@contextlib.contextmanager
def daemon_homes(configs: dict[str, str]) -> Iterator[dict[str, Path]]:
    """A temporary TOKA_HOME per name, with its config.toml (following no agent's folders); the
    daemons started in them are stopped and the homes removed at the end."""
    homes = {name: Path(tempfile.mkdtemp(prefix=f"tkrec-{name}-")) for name in configs}
    for name, home in homes.items():
        (home / "config.toml").write_text(NOT_WATCHING + configs[name])
    try:
        yield homes
    finally:
        for home in homes.values():
            subprocess.run(
                [str(TOKA), "daemon", "stop"],
                env={**os.environ, "TOKA_HOME": str(home)},
                check=False,
                capture_output=True,
            )
        for home in homes.values():
            shutil.rmtree(home, ignore_errors=True)


def recall_config(model: str, semantic: bool) -> str:
    return f'[recall]\nsemantic = {str(semantic).lower()}\nembedding_model = "{model}"\n'


def ingest(events: int, rounds: int, model: str, on_config: str = "", control: bool = False) -> dict[str, Any]:
    from daemon.client.sync import Client
    from daemon.paths import resolve_paths

    configs = {"on": recall_config(model, not control) + on_config, "off": recall_config(model, False)}
    times: dict[str, list[float]] = {"on": [], "off": []}
    caught_up: list[float] = []
    body = texts(events, seed=11)
    with daemon_homes(configs) as homes:
        for round_ in range(rounds):
            for name in ("off", "on") if round_ % 2 else ("on", "off"):
                os.environ["TOKA_HOME"] = str(homes[name])
                with Client(resolve_paths()) as client:
                    if name == "on" and not control:  # the model loaded before the clock starts
                        while client.call("recall.status")["embedded"] is None:
                            time.sleep(0.05)
                    batch = [{"session": f"r{round_}", "kind": "message", "payload": {"text": t}} for t in body]
                    started = time.perf_counter()
                    for start in range(0, len(batch), 100):
                        client.append(batch[start : start + 100])
                    times[name].append(time.perf_counter() - started)
                    if name == "on" and not control:
                        done = time.perf_counter()
                        while client.call("recall.status")["behind"] != 0:
                            time.sleep(0.02)
                        caught_up.append(time.perf_counter() - done)
    on, off = statistics.median(times["on"]), statistics.median(times["off"])
    return {
        "events_per_round": events,
        "rounds": rounds,
        "on_events_per_s": round(events / on),
        "off_events_per_s": round(events / off),
        "on_vs_off": round(off / on, 3),
        "embedder_caught_up_after_s": round(statistics.median(caught_up), 2) if caught_up else None,
    }


def busy(events: int, rounds: int, model: str, backlog: int) -> dict[str, Any]:
    """Single appends to a daemon whose embedder works through a backlog, against a daemon with
    semantic recall off, alternating rounds. The appended messages are of 5 words, which no model
    embeds: the backlog (``backlog`` messages of 40 to 120 words, appended first) is all the
    embedder has; what is left of it after each round is reported."""
    from daemon.client.sync import Client
    from daemon.paths import resolve_paths

    times: dict[str, list[float]] = {"busy": [], "off": []}
    left: list[int] = []
    with daemon_homes({"busy": recall_config(model, True), "off": recall_config(model, False)}) as homes:
        os.environ["TOKA_HOME"] = str(homes["off"])
        with Client(resolve_paths()) as client:  # started before the rounds, as the other
            client.call("status")
        os.environ["TOKA_HOME"] = str(homes["busy"])
        with Client(resolve_paths()) as client:
            while client.call("recall.status")["embedded"] is None:  # the model loaded
                time.sleep(0.05)
            long = [{"session": "backlog", "kind": "message", "payload": {"text": t}} for t in texts(backlog, seed=5)]
            for start in range(0, len(long), 100):
                client.append(long[start : start + 100])
        for round_ in range(rounds):
            for name in ("off", "busy") if round_ % 2 else ("busy", "off"):
                os.environ["TOKA_HOME"] = str(homes[name])
                with Client(resolve_paths()) as client:
                    started = time.perf_counter()
                    for n in range(events):
                        client.append(
                            [{"session": f"r{round_}", "kind": "message", "payload": {"text": f"ok {n} on it"}}]
                        )
                    times[name].append(time.perf_counter() - started)
                    if name == "busy":
                        left.append(backlog - client.call("recall.status")["embedded"])
    on, off = statistics.median(times["busy"]), statistics.median(times["off"])
    return {
        "single_appends_per_round": events,
        "rounds": rounds,
        "backlog": backlog,
        "busy_appends_per_s": round(events / on),
        "off_appends_per_s": round(events / off),
        "busy_vs_off": round(off / on, 3),
        "busy_rounds_s": [round(t, 3) for t in times["busy"]],
        "off_rounds_s": [round(t, 3) for t in times["off"]],
        "backlog_left_after_each_busy_round": left,
    }


async def queries(count: int, postgres_url: str | None, model: str) -> dict[str, Any]:
    import numpy as np

    from daemon.recall.model import load_embedder
    from store.events import NewEvent
    from store.search import SearchQuery
    from store.sqlite.store import SqliteStore
    from store.vectors import VectorState

    rng = np.random.default_rng(3)
    found: dict[str, Any] = {"vectors": count, "model": model}
    embedder = load_embedder(model)
    question = "which message broker did we settle on"
    embedder.embed([question])
    samples = []
    for _ in range(50):
        started = time.perf_counter()
        embedder.embed([question])
        samples.append(time.perf_counter() - started)
    found["embed_query_p50_ms"] = round(statistics.median(samples) * 1000, 3)
    stores: list[tuple[str, Any]] = []
    workdir = Path(tempfile.mkdtemp(prefix="tkrec-q-"))
    sqlite = await SqliteStore.open(workdir / "toka.db")
    stores.append(("sqlite", sqlite))
    if postgres_url:
        from store.postgres.store import PostgresStore

        stores.append(("postgres", await PostgresStore.open(postgres_url)))
    rare = "zebrafish"
    for name, store in stores:
        try:
            index = store.vectors()
            await index.state()
        except Exception as exc:  # noqa: BLE001 - a server without pgvector: say so and go on
            found[name] = f"not measured: {exc}"
            continue
        text_rng = random.Random(5)
        chunk = 5000
        for start in range(0, count, chunk):
            batch = [
                NewEvent(
                    session=f"s{(start + i) % 100}",
                    kind="message",
                    payload={"text": sentence(text_rng, 30) + (f" {rare}" if (start + i) % 100 == 0 else "")},
                )
                for i in range(min(chunk, count - start))
            ]
            results = await store.append(batch)
            matrix = rng.standard_normal((len(batch), embedder.dims)).astype("<f4")
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            rows = [(result.event.seq, matrix[i].tobytes()) for i, result in enumerate(results)]
            await index.add(rows, VectorState("bench", results[-1].event.seq, start + len(batch)))
        wanted = embedder.embed([question])[0]
        figures: dict[str, Any] = {"method": index.method}
        for label, query in (
            ("nearest_60_all_p50_ms", SearchQuery("", limit=60)),
            ("nearest_60_one_session_p50_ms", SearchQuery("", session="s7", limit=60)),
        ):
            await index.nearest(wanted, query)
            samples = []
            for _ in range(15):
                started = time.perf_counter()
                await index.nearest(wanted, query)
                samples.append(time.perf_counter() - started)
            figures[label] = round(statistics.median(samples) * 1000, 2)
        await store.search(SearchQuery(rare, limit=60))
        samples = []
        for _ in range(15):
            started = time.perf_counter()
            await store.search(SearchQuery(rare, limit=60))
            samples.append(time.perf_counter() - started)
        figures["fts_60_word_in_1pct_p50_ms"] = round(statistics.median(samples) * 1000, 2)
        figures["nearest_all_vs_fts"] = round(
            figures["nearest_60_all_p50_ms"] / figures["fts_60_word_in_1pct_p50_ms"], 2
        )
        figures["load"] = load()  # as this store's queries end
        found[name] = figures
    for _, store in stores:
        await store.close()
    shutil.rmtree(workdir, ignore_errors=True)
    return found


def throwaway_postgres() -> tuple[Any, str]:
    """A server started for this run with its default durability, and the URL of a new database on it."""
    sys.path.insert(0, str(ROOT / "tests"))
    import postgres_server
    import psycopg

    server = postgres_server.start(durable=True)
    with psycopg.connect(server.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE recall")
        version = conn.execute("SHOW server_version").fetchone()
    print(f"PostgreSQL {version[0] if version else '?'} from {server.bindir}", file=sys.stderr)
    return server, postgres_server.with_dbname(server.url, "recall")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vectors", type=int, default=100_000)
    parser.add_argument("--ingest-events", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--skip", nargs="*", default=(), choices=("throughput", "ingest", "ab", "queries"))
    parser.add_argument(
        "--busy",
        type=int,
        default=0,
        metavar="BACKLOG",
        help="also: single appends while the embedder works through BACKLOG long messages, against semantic off",
    )
    parser.add_argument("--control", action="store_true", help="also: both daemons off, the noise of the A/B")
    parser.add_argument("--model-only", action="store_true", help="also: on with nothing appended embedded")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="the recall.embedding_model measured (default: toka's)")
    parser.add_argument("--postgres", action="store_true", help="also: PostgreSQL, on a throw-away server")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result: dict[str, Any] = {"load_before": load()}
    if "throughput" not in args.skip:
        result["throughput"] = throughput(args.model)
        print(json.dumps(result["throughput"]), file=sys.stderr)
    if "ingest" not in args.skip:
        result["ingest"] = ingest(args.ingest_events, args.rounds, args.model) if "ab" not in args.skip else None
        if args.control:  # both daemons off: how far apart two identical daemons measure
            result["ingest_control"] = ingest(args.ingest_events, args.rounds, args.model, control=True)
        if args.model_only:  # the model loaded, nothing of what is appended embedded
            notes_only = 'embedded_kinds = ["note.*"]\n'
            result["ingest_model_only"] = ingest(args.ingest_events, args.rounds, args.model, notes_only)
        print(json.dumps(result["ingest"]), file=sys.stderr)
    if args.busy:
        result["busy"] = busy(2000, args.rounds, args.model, args.busy)
        print(json.dumps(result["busy"]), file=sys.stderr)
    if "queries" not in args.skip:
        url = os.environ.get("TOKATEST_POSTGRES_URL")
        server = None
        if args.postgres and not url:
            server, url = throwaway_postgres()
            result["postgres_server"] = str(server.bindir)
        try:
            result["queries"] = asyncio.run(queries(args.vectors, url, args.model))
        finally:
            if server is not None:
                import postgres_server

                postgres_server.stop(server)
    result["load_after"] = load()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
