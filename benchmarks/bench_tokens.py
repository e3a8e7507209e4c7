"""Token estimation benchmark: daemon.compress.tokens' estimates against the usage Claude Code recorded.

A Claude Code transcript records, for each response of the model, the size of the prompt it was
given (``context_tokens`` of the ``usage`` event: input + cache creation + cache read). Between two
consecutive responses of the main chain the prompt grows by exactly what was added to the
conversation: the earlier response's own blocks (text, thinking, tool calls) and what came back
(tool results, user messages). So each pair of consecutive prompts gives a true count
(``delta = context_tokens[k+1] - context_tokens[k]``) to compare with the estimate of those
events.

The importer emits a response's ``usage`` event when the next response begins (it waits for the
largest output count among the response's records), so in the event stream the events between
usage ``k-1`` and usage ``k`` are response ``k``'s blocks and what followed them: the events added
between prompt ``k`` and prompt ``k+1``.

Kept: main-chain usage events (agent "main", ``sidechain`` false, not a revision); deltas that are
positive, with no compaction among the events of the pair; events of kinds message, thinking,
tool.call, tool.result and block (``raw``, ``system`` and metadata records never reach the model).
Reported per estimator: the median absolute percentage error over the deltas, the aggregate
ratio (sum of estimates / sum of deltas), the share within ±25%, and the time per event (over the
fixtures' events, whose tool outputs run to thousands of characters, and over a typical small
message). Two rows for characters ÷ 4: inside ``payload_tokens`` (the same per-block framing as the
heuristic, so only the text estimate differs) and bare, over the same text with no framing, the
way a context is often sized without any model of it.

Run ``python benchmarks/bench_tokens.py`` (a few seconds); ``--json`` prints the results as JSON.
Needs ../shared/fixtures/transcripts/claude.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from daemon.compress.tokens import CharsEstimator, Estimator, estimator, payload_tokens
from daemon.ingest.formats import PARSERS, detect, expand
from daemon.ingest.lines import ParseStats

HERE = Path(__file__).resolve()
FIXTURES = HERE.parents[2] / "shared" / "fixtures" / "transcripts" / "claude"
# What a response adds to the conversation; everything else is bookkeeping the model never sees.
CONTEXT_KINDS = frozenset({"message", "thinking", "tool.call", "tool.result", "block"})


@dataclass(frozen=True)
class Delta:
    """One measured prompt growth and the events that caused it."""

    file: str
    tokens: int
    events: tuple[tuple[str, dict[str, Any]], ...]  # (kind, payload)


def read_events(path: Path) -> list[dict[str, Any]]:
    fmt = detect(path)
    if fmt is None:
        return []
    return list(PARSERS[fmt](path, ParseStats()))


def deltas(events: Iterable[dict[str, Any]], file: str = "") -> list[Delta]:
    """The prompt deltas of one transcript's main chain (module docstring)."""
    usages: list[int] = []  # context_tokens of each main-chain response, in order
    segments: list[list[tuple[str, dict[str, Any]]]] = [[]]  # events before each usage, and after the last
    compacted: list[bool] = [False]
    for event in events:
        if event.get("agent") != "main":
            continue
        kind, payload = event["kind"], event["payload"]
        if kind == "usage":
            if payload.get("sidechain") or payload.get("revision") or "context_tokens" not in payload:
                continue
            usages.append(int(payload["context_tokens"]))
            segments.append([])
            compacted.append(False)
        elif kind == "compaction":
            compacted[-1] = True
        elif kind in CONTEXT_KINDS:
            segments[-1].append((kind, payload))
    found: list[Delta] = []
    # segments[i] holds the events between usage i-1 and usage i: they grow prompt i into prompt i+1.
    for i in range(1, len(usages) - 1):
        grown = usages[i + 1] - usages[i]
        if grown <= 0 or compacted[i] or compacted[i + 1] or not segments[i]:
            continue
        found.append(Delta(file, grown, tuple(segments[i])))
    return found


def fixture_deltas(root: Path = FIXTURES) -> list[Delta]:
    found: list[Delta] = []
    for path in expand([root], "claude-code"):
        found += deltas(read_events(path), str(path.relative_to(root)))
    return found


@dataclass(frozen=True)
class Accuracy:
    estimator: str
    deltas: int
    mape: float  # median absolute percentage error
    ratio: float  # sum of estimates / sum of deltas
    within_25: float  # share of deltas estimated within ±25%
    us_per_event: float
    us_per_small_event: float = 0.0


def bare_chars(kind: str, payload: dict[str, Any]) -> int:
    """Characters ÷ 4 of an event's text, with no framing and nothing for withheld thinking."""
    if kind in ("message", "thinking"):
        text = payload.get("text") or ""
    elif kind == "tool.call":
        text = str(payload.get("tool", "")) + json.dumps(payload.get("input"), separators=(",", ":"))
    elif kind == "tool.result":
        output = payload.get("output")
        text = output if isinstance(output, str) else json.dumps(output)
    else:
        text = json.dumps(payload, separators=(",", ":"))
    return -(-len(text) // 4)


def accuracy(found: list[Delta], est: Estimator, *, bare: bool = False) -> Accuracy:
    errors: list[float] = []
    estimated = actual = 0
    events = 0
    start = time.perf_counter()
    for delta in found:
        if bare:
            guess = sum(bare_chars(kind, payload) for kind, payload in delta.events)
        else:
            guess = sum(payload_tokens(kind, payload, est) for kind, payload in delta.events)
        events += len(delta.events)
        errors.append(abs(guess - delta.tokens) / delta.tokens)
        estimated += guess
        actual += delta.tokens
    elapsed = time.perf_counter() - start
    return Accuracy(
        estimator=f"{est.name}, bare" if bare else est.name,
        deltas=len(found),
        mape=statistics.median(errors) if errors else 0.0,
        ratio=estimated / actual if actual else 0.0,
        within_25=sum(e <= 0.25 for e in errors) / len(errors) if errors else 0.0,
        us_per_event=elapsed / events * 1e6 if events else 0.0,
    )


# A typical small event: one user message of 128 characters.
SMALL = {
    "role": "user",
    "text": "Please fix the failing test in tests/test_api.py: the assertion on line 42 expects 200 but gets 404.",
}


def small_event_us(est: Estimator, number: int = 20_000) -> float:
    """Microseconds to estimate SMALL, best of three runs."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(number):
            payload_tokens("message", SMALL, est)
        best = min(best, time.perf_counter() - start)
    return best / number * 1e6


def table(results: list[Accuracy]) -> str:
    head = ("Estimator", "Deltas", "Median abs. error", "Sum est. / sum actual", "Within ±25%", "µs / event")
    body = [
        (
            r.estimator,
            f"{r.deltas:,}",
            f"{r.mape:.1%}",
            f"{r.ratio:.3f}",
            f"{r.within_25:.0%}",
            f"{r.us_per_event:.1f}" + (f" ({r.us_per_small_event:.1f} small)" if r.us_per_small_event else ""),
        )
        for r in results
    ]
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]

    def fmt(line: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |"

    return "\n".join([fmt(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *(fmt(b) for b in body)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--fixtures", type=Path, default=FIXTURES, help="folder of Claude Code transcripts")
    args = parser.parse_args(argv)
    if not args.fixtures.exists():
        print(f"error: {args.fixtures} is absent: the shared fixtures are not checked out", file=sys.stderr)
        return 1
    found = fixture_deltas(args.fixtures)
    names = ["heuristic", "chars"]
    try:
        estimator("tiktoken")
        names.append("tiktoken")
    except ValueError:
        pass
    results = [
        replace(accuracy(found, estimator(name)), us_per_small_event=small_event_us(estimator(name))) for name in names
    ]
    results.append(accuracy(found, CharsEstimator(), bare=True))
    if args.json:
        print(json.dumps({"fixtures": str(args.fixtures), "results": [r.__dict__ for r in results]}, indent=2))
    else:
        print(f"{len(found)} prompt deltas from {args.fixtures}")
        print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
