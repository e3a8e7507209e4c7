"""Report benchmark: `toka report daily --json` over a log of 1M usage events, against a raw SQL
GROUP BY over the same rows plus pricing in Python, both as fresh processes.

The log holds 1M usage events: 5,000 sessions of 200 calls, spread over a year, each a call every
20 to 90 seconds; Claude sessions (Opus 4.6, Sonnet 4.5, Haiku 4.5 subagents; a prompt that grows
to 190k tokens, a twentieth of them past 200k, where Sonnet's long-context tier applies; one-hour
cache writes) and Codex sessions (GPT-5.3 Codex, OpenAI's counts). It is written through
``SqliteStore.append`` in batches of 5,000, so the usage projection is what appends keep.

- toka: the console script, `toka report daily --json --timezone UTC`, against a daemon already
  running on that log: the daemon reads the usage projection, sums it per day and prices it.
- reference: ``python -c`` on a plain table of the same 1M calls (ts, model and the token
  counts, nothing else): one ``GROUP BY`` day (UTC), model and prompt class (the tier starts, as a
  ``CASE`` sum, so that long prompts can be priced as they must), then each group priced in
  Python with toka's own price table (daemon/cost/prices.py), and the days printed as JSON.

Both give the same total (checked). The two alternate after a warm-up; medians of ``--runs``.
Target: toka within 1.5x of the reference. ``--workdir`` keeps the built log (about two minutes
to build) for the next run. Run from the project root:

    .venv/bin/python benchmarks/bench_report.py [--runs 7] [--workdir /tmp/tkbr] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_foundation import DaemonProcess, Home, described, machine, show

from store.events import NewEvent
from store.sqlite.store import SqliteStore
from store.usage import PROMPT_CLASSES

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.5
SESSIONS, CALLS = 5000, 200
YEAR_START = 1_767_225_600  # 2026-01-01T00:00:00Z
BATCH = 5000

REFERENCE = f"""\
import json, sqlite3, sys
from collections import defaultdict
from datetime import datetime, timezone
from decimal import Decimal
from daemon.cost.prices import PriceTable, Tokens
from store.usage import class_prompt
db = sqlite3.connect(sys.argv[1])
prompt = "(input + cache_creation + cache_read)"
classes = " + ".join(f"({{prompt}} > {{start}})" for start in {PROMPT_CLASSES!r})
rows = db.execute(
    "SELECT ts / 86400000000, model, " + classes + ", count(*), sum(input), sum(output), sum(cache_creation),"
    " sum(cache_creation_1h), sum(cache_read) FROM usage GROUP BY 1, 2, 3"
).fetchall()
table = PriceTable()
days = defaultdict(lambda: [0, 0, Decimal(0)])
for day, model, prompt_class, calls, i, o, cw, cw1h, cr in rows:
    at = datetime.fromtimestamp(day * 86400, timezone.utc)
    found = table.find(model)
    cost = found.rates(at).cost(Tokens(i, o, cw, cw1h, cr), class_prompt(prompt_class)) if found else Decimal(0)
    days[day][0] += calls
    days[day][1] += i + o + cw + cr
    days[day][2] += cost
out = [{{"day": datetime.fromtimestamp(d * 86400, timezone.utc).date().isoformat(), "calls": c, "total_tokens": t,
        "cost_usd": float(x.quantize(Decimal("0.000001")))}} for d, (c, t, x) in sorted(days.items())]
print(json.dumps({{"rows": out, "cost_usd": float(sum(x for _, _, x in days.values()).quantize(Decimal("0.000001")))}}))
"""


def calls(seed: int = 7) -> list[tuple[int, str, str, dict[str, Any]]]:
    """(ts in microseconds, session, agent, payload) of every call."""
    rng = random.Random(seed)
    made = []
    for number in range(SESSIONS):
        session = f"s{number:05d}"
        codex = rng.random() < 0.2
        claude = ("claude-opus-4-6", "claude-opus-4-6", "claude-sonnet-4-5")
        main_model = "gpt-5.3-codex" if codex else rng.choice(claude)
        ts = YEAR_START + rng.uniform(0, 364 * 86400)
        long = rng.random() < 0.05
        for call in range(CALLS):
            ts += rng.uniform(20, 90)
            prompt = 20_000 + (250_000 if long else 170_000) * call // CALLS
            subagent = not codex and rng.random() < 0.2
            model = "claude-haiku-4-5" if subagent else main_model
            if codex:
                payload = {"model": model, "input_tokens": prompt, "cached_input_tokens": prompt - 2000,
                           "output_tokens": rng.randrange(50, 3000), "context_tokens": prompt}  # fmt: skip
            else:
                write = rng.randrange(200, 4000)
                payload = {"model": model, "input_tokens": rng.randrange(1, 50), "cache_creation_tokens": write,
                           "cache_creation_1h_tokens": write if call % 3 == 0 else 0,
                           "cache_read_tokens": prompt - write, "output_tokens": rng.randrange(50, 3000)}  # fmt: skip
            made.append((int(ts * 1_000_000), session, f"a{call % 4}" if subagent else "main", payload))
    return made


async def _build_log(path: Path, made: list[tuple[int, str, str, dict[str, Any]]]) -> None:
    store = await SqliteStore.open(path)
    try:
        for first in range(0, len(made), BATCH):
            chunk = made[first : first + BATCH]
            await store.append([NewEvent(session, "usage", body, agent, ts) for ts, session, agent, body in chunk])
    finally:
        await store.close()


def build(home: Home, raw: Path) -> float:
    """The log in ``home`` and the plain table at ``raw``; seconds it took (0 when both were kept)."""
    if home.database.exists() and raw.exists():
        return 0.0
    start = time.perf_counter()
    made = calls()
    for stale in (home.database, raw):
        stale.unlink(missing_ok=True)
    asyncio.run(_build_log(home.database, made))
    db = sqlite3.connect(raw)
    db.execute(
        "CREATE TABLE usage (ts INTEGER, session TEXT, agent TEXT, model TEXT, input INTEGER, output INTEGER,"
        " cache_creation INTEGER, cache_creation_1h INTEGER, cache_read INTEGER)"
    )
    rows = []
    for ts, session, agent, p in made:
        cached = p.get("cached_input_tokens")
        uncached = p["input_tokens"] - cached if cached is not None else p["input_tokens"]
        read = cached if cached is not None else p["cache_read_tokens"]
        writes = (p.get("cache_creation_tokens", 0), p.get("cache_creation_1h_tokens", 0))
        rows.append((ts, session, agent, p["model"], uncached, p["output_tokens"], *writes, read))
    db.executemany("INSERT INTO usage VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    db.commit()
    db.close()
    return time.perf_counter() - start


def timed(command: list[str], env: dict[str, str]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, env=env, timeout=600, cwd=ROOT)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed: {result.returncode} {result.stderr.decode()[-2000:]}")
    return elapsed, json.loads(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--workdir", type=Path, help="keep the built log here, and reuse it")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()

    work = options.workdir.absolute() if options.workdir else Path(tempfile.mkdtemp(prefix="tkbr", dir="/tmp"))
    home = Home(work, "h")
    raw = work / "raw.db"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("TOKA_")}, "TOKA_HOME": str(home.root)}
    toka = Path(sys.executable).parent / "toka"
    try:
        info = machine()
        built = build(home, raw)
        print(f"built in {built:.0f} s" if built else "reusing the built log", file=sys.stderr)
        with DaemonProcess(home):
            report_times: list[float] = []
            reference_times: list[float] = []
            for run in range(-1, options.runs):  # a warm-up round
                took, report = timed([str(toka), "report", "daily", "--json", "--timezone", "UTC"], env)
                reference_took, reference = timed([sys.executable, "-c", REFERENCE, str(raw)], env)
                if run >= 0:
                    report_times.append(took)
                    reference_times.append(reference_took)
            if report["totals"]["cost_usd"] != reference["cost_usd"] or len(report["rows"]) != len(reference["rows"]):
                raise RuntimeError(f"different totals: {report['totals']['cost_usd']} and {reference['cost_usd']}")
            projection_rows = sqlite3.connect(home.database).execute("SELECT count(*) FROM usage_buckets").fetchone()[0]
    finally:
        if not options.workdir:
            shutil.rmtree(work, ignore_errors=True)
    report_ms = statistics.median(report_times) * 1000
    reference_ms = statistics.median(reference_times) * 1000
    result = {
        **described(info),
        "sqlite": info["sqlite"],
        "usage_events": SESSIONS * CALLS,
        "projection_rows": projection_rows,
        "days": len(report["rows"]),
        "total_cost_usd": report["totals"]["cost_usd"],
        "runs": options.runs,
        "report_ms": round(report_ms, 1),
        "reference_ms": round(reference_ms, 1),
        "ratio": round(report_ms / reference_ms, 2),
        "target": TARGET,
        "pass": report_ms / reference_ms <= TARGET,
        "load": [info["load_at_start"], round(os.getloadavg()[0], 2)],
    }
    show(result, options.json)


if __name__ == "__main__":
    main()
