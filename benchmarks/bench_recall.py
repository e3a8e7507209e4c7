"""Semantic recall's quality: held-out paraphrased questions over real sessions, through a real daemon.

    .venv/bin/python benchmarks/bench_recall.py [--json] [--questions FILE]

The questions are benchmarks/data/recall_questions.json: each names an event of one of the shared
transcript fixtures (../shared/fixtures/transcripts/, by file and by the index of the event among
those the file's parser yields) and asks for it in other words: no question shares a content word
(a word outside :data:`FUNCTION_WORDS`) with its target's text, which this script checks before
anything is measured. The fixtures are imported with `toka import` into a daemon of a temporary
home, which embeds them; once it has caught up, each question is asked through the daemon's
``search`` op, and the figure is how many questions find their target in the first 5 hits:

- ``hybrid``: the default ranking (words and meaning fused, kinds weighed), over every session;
- ``semantic``: the meaning only (``--semantic``), over every session;
- ``fts``: the words only (``--fts``, the query as written), over every session: the floor, 0 by
  construction;
- ``hybrid in session``, ``semantic in session``: the same within the question's own session, as
  ``toka recall --session`` looks first.

Also printed: the rank of each target (``-`` beyond the first 50).

``--questions benchmarks/data/recall_questions_dev.json`` asks the twelve questions of the same
kind over four other sessions instead: the set to tune the ranking on, so that the twenty of
recall_questions.json stay held out (docs/benchmarks.md, "Semantic recall"). The daemon embeds
with the model ``TOKA_RECALL_EMBEDDING_MODEL`` names (by default toka's,
``minilm/all-MiniLM-L6-v2-int8+wordllama/l2_supercat-256``), e.g. ``wordllama/l2_supercat-256`` for
WordLlama alone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures" / "transcripts"
TOKA = Path(sys.executable).parent / "toka"
QUESTIONS = Path(__file__).resolve().parent / "data" / "recall_questions.json"
TOP = 5
MODES = (
    ("hybrid", "hybrid"),
    ("semantic", "semantic"),
    ("fts", "fts"),
    ("hybrid in session", "hybrid"),
    ("semantic in session", "semantic"),
)
DEPTH = 50
# Words that carry no content: a question may share these with its target.
FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "by",
        "with",
        "and",
        "or",
        "but",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "who",
        "whom",
        "why",
        "how",
        "when",
        "where",
        "did",
        "do",
        "does",
        "done",
        "from",
        "as",
        "so",
        "if",
        "then",
        "than",
        "into",
        "out",
        "up",
        "down",
        "over",
        "under",
        "about",
        "after",
        "before",
        "again",
        "all",
        "any",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "no",
        "nor",
        "not",
        "only",
        "own",
        "same",
        "too",
        "very",
        "can",
        "will",
        "just",
        "should",
        "now",
        "there",
        "their",
        "they",
        "them",
        "we",
        "our",
        "you",
        "your",
        "i",
        "me",
        "my",
        "he",
        "she",
        "his",
        "her",
        "one",
    ]
)


def targets(questions: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """For each question, the target's session, payload digest and text, read from the fixture
    with toka's own parser; fails when a question shares a content word with its target."""
    from daemon.ingest.claude_code import parse_claude_code
    from daemon.ingest.parser import ParseStats
    from store.events import canonical_json, digest
    from store.search import indexed_text, tokens

    parsed: dict[str, list[Any]] = {}
    found = []
    for question in questions:
        path = FIXTURES / question["file"]
        if question["file"] not in parsed:
            parsed[question["file"]] = list(parse_claude_code(path, ParseStats()))
        event = parsed[question["file"]][question["event"]]
        text = indexed_text(event["kind"], event["payload"]) or ""
        shared = (set(tokens(question["question"])) - FUNCTION_WORDS) & set(tokens(text))
        if shared:
            raise SystemExit(f"question {question['question']!r} shares {sorted(shared)} with its target")
        found.append((event["session"], digest(canonical_json(event["payload"])), text))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--questions", type=Path, default=QUESTIONS, help="the questions (default: the held-out set)")
    args = parser.parse_args()
    if not FIXTURES.is_dir():
        raise SystemExit(f"{FIXTURES} is absent: the shared fixtures are not checked out beside the project")
    questions = json.loads(args.questions.read_text())["questions"]
    wanted = targets(questions)
    files = sorted({str(FIXTURES / q["file"]) for q in questions})
    with tempfile.TemporaryDirectory() as home:
        os.environ["TOKA_HOME"] = home
        from daemon.client.sync import Client
        from store.search_syntax import literal_query

        subprocess.run([str(TOKA), "import", *files], check=True, capture_output=True)
        started = time.perf_counter()
        with Client() as client:
            while (status := client.call("recall.status"))["behind"] != 0:
                time.sleep(0.2)
            caught_up = time.perf_counter() - started
            ranks: dict[str, list[int | None]] = {name: [] for name, _ in MODES}
            for question, (session, payload_digest, _) in zip(questions, wanted, strict=True):
                for name, mode in MODES:
                    extra = {"session": session} if name.endswith("in session") else {}
                    if mode == "fts":  # the words as written, in FTS5 syntax
                        extra |= {"fts": True, "query": literal_query(question["question"])}
                    elif mode == "semantic":
                        extra |= {"semantic": True}
                    hits = client.call("search", **({"query": question["question"], "limit": DEPTH} | extra))["hits"]
                    digests = [hit["digest"] for hit in hits]
                    ranks[name].append(digests.index(payload_digest) + 1 if payload_digest in digests else None)
        subprocess.run([str(TOKA), "daemon", "stop"], check=False, capture_output=True)
    result = {
        "questions": len(questions),
        "embedded": status["embedded"],
        "model": status["model"],
        "method": status["method"],
        "embedding_s": round(caught_up, 2),
        f"in_top_{TOP}": {name: sum(1 for r in found if r is not None and r <= TOP) for name, found in ranks.items()},
        "ranks": ranks,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{len(questions)} questions, {status['embedded']} events embedded by {status['model']} ({status['method']})")
    for name, found in ranks.items():
        shown = " ".join("-" if r is None else str(r) for r in found)
        print(f"  {name:18} {result[f'in_top_{TOP}'][name]:2}/{len(questions)} in the first {TOP}   ranks: {shown}")


if __name__ == "__main__":
    main()
