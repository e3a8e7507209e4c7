"""Redaction (``daemon.redact.redact``) over the text of a real session, against a bare regex pass
over the same text in the same run.

    .venv/bin/python benchmarks/bench_redact.py [--rounds N] [--json] [--file TRANSCRIPT] [--baseline FILE]

The text is what ``toka context`` hands a model: every event of the largest Claude Code fixture
of ../shared that a context replays (messages, tool calls and results, summaries, notes),
rendered as the context renders it. Two ways of calling ``redact`` are timed: once over the
whole text joined, and once per message (as ``toka context`` and the handoff builder call it:
many short texts, so the fixed cost of each call counts). The reference is the cheapest
redactor there is: one precompiled email-like pattern substituted over the same text (and,
per message, over each message), which touches every character once. Medians of ``--rounds``;
the target is redaction of every kind ≤ 10× that single pass. ``--baseline`` names another
version's redaction module (a ``redact.py`` defining ``redact``, say from ``git show
REV:daemon/redact.py``), timed in the same run for a before and after.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_foundation import machine

from daemon.compress.context import render
from daemon.ingest.formats import PARSERS, detect
from daemon.ingest.lines import ParseStats
from daemon.redact import KINDS, redact
from store.events import parse_new_event

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = (
    ROOT.parent / "shared" / "fixtures" / "transcripts" / "claude" / "marot__fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
)
TARGET = 10.0
# The reference: one pattern of the usual shape, substituted in one pass.
BARE = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")


def messages(path: Path) -> list[str]:
    """The contents of the messages a context would hold for every event of the transcript."""
    fmt = detect(path)
    if fmt is None:
        raise SystemExit(f"{path} is not a transcript toka reads")
    contents = []
    for record in PARSERS[fmt](path, ParseStats()):
        shown = render(parse_new_event(record))
        if shown is not None:
            contents.append(shown[1])
    return contents


def interleaved(timed: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """The median time of each function, run in turn in every round (after one warm-up round),
    so that a change of load on the machine moves them all alike."""
    times: dict[str, list[float]] = {name: [] for name in timed}
    for round_ in range(rounds + 1):
        for name, fn in timed.items():
            began = time.perf_counter()
            fn()
            if round_:
                times[name].append(time.perf_counter() - began)
    return {name: statistics.median(found) for name, found in times.items()}


def load_baseline(path: Path) -> Callable[[str], Any]:
    spec = importlib.util.spec_from_file_location("baseline_redact", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    baseline: Callable[[str], Any] = module.redact
    return baseline


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--file", type=Path, default=FIXTURE, help="a Claude Code or Codex transcript")
    parser.add_argument("--baseline", type=Path, help="another version's redaction module, timed alongside")
    args = parser.parse_args()
    if not args.file.exists():
        raise SystemExit(f"{args.file} is absent: the shared fixtures are not checked out beside the project")
    contents = messages(args.file)
    text = "\n\n".join(contents)

    def bare_whole() -> None:
        BARE.sub("[redacted]", text)

    def bare_each() -> None:
        for content in contents:
            BARE.sub("[redacted]", content)

    timed: dict[str, Callable[[], Any]] = {
        "whole/reference": bare_whole,
        "whole/redact": lambda: redact(text),
        "per_message/reference": bare_each,
        "per_message/redact": lambda: [redact(content) for content in contents],
    }
    result: dict[str, Any] = {
        "machine": machine(),
        "file": args.file.name,
        "messages": len(contents),
        "chars": len(text),
        "kinds": len(KINDS),
        "found": redact(text).counts,
        "target": TARGET,
    }
    parts = ["whole", "per_message"]
    if args.baseline is not None:
        baseline = load_baseline(args.baseline)
        timed["baseline_whole/redact"] = lambda: baseline(text)
        timed["baseline_per_message/redact"] = lambda: [baseline(content) for content in contents]
        result["baseline_found"] = baseline(text).counts
        parts += ["baseline_whole", "baseline_per_message"]
    medians = interleaved(timed, args.rounds)
    for part in parts:
        reference = medians[f"{part.removeprefix('baseline_')}/reference"]
        redacted = medians[f"{part}/redact"]
        result[part] = {
            "reference_ms": round(reference * 1000, 2),
            "redact_ms": round(redacted * 1000, 2),
            "ratio": round(redacted / reference, 2),
            "mb_per_s": round(len(text) / 1e6 / redacted, 1),
        }
    result["pass"] = max(result["whole"]["ratio"], result["per_message"]["ratio"]) <= TARGET
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{args.file.name}: {len(contents):,} messages, {len(text):,} characters, {len(KINDS)} kinds")
    print(f"found {result['found']}")
    if args.baseline is not None:
        print(f"found by the baseline {args.baseline}: {result['baseline_found']}")
    for part in parts:
        figures = result[part]
        print(
            f"{part:>20}: redact {figures['redact_ms']} ms ({figures['mb_per_s']} MB/s),"
            f" bare pass {figures['reference_ms']} ms, ratio {figures['ratio']}x"
        )
    print(f"target: redact <= {TARGET}x a bare regex pass: {'PASS' if result['pass'] else 'SHORT'}")


if __name__ == "__main__":
    main()
