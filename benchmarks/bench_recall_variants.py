"""Ways of ranking by meaning, tried against the recall questions outside the daemon: the figures of
docs/benchmarks.md, "Semantic recall", for what was tried and left out.

    .venv/bin/python benchmarks/bench_recall_variants.py [--json]

Both sets of questions are asked: benchmarks/data/recall_questions_dev.json (12 questions over
four sessions, the set to tune on) and benchmarks/data/recall_questions.json (20 over five other
sessions, held out). Each set's sessions are read from the shared transcript fixtures with toka's
own parser, with their subagents' files as ``toka import`` reads them (after bench_recall.py's check
that no question shares a content word with its target), and the events are embedded
from the text the daemon embeds (``store.vectors.embedded_text``) by the model it loads; scores are
weighed by kind as ``daemon/search/ranking.py`` does. ``baseline`` is the ranking the daemon ships
(benchmarks/bench_recall.py measures it through a real daemon; the figures are the same). Each
variant changes one thing; the figure is how many questions find their target in the first 5,
over the set's sessions and within the target's own session.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
FIXTURES = ROOT.parent / "shared" / "fixtures" / "transcripts"
SETS = (("dev", DATA / "recall_questions_dev.json"), ("held out", DATA / "recall_questions.json"))
TOP = 5


@dataclass
class Corpus:
    """One set's embedded events and questions: ``vectors`` one row per event, ``queries`` one per
    question, ``session`` each event's session number, ``target`` each question's event row."""

    texts: list[str]
    kinds: list[str]
    session: Any
    vectors: Any
    queries: Any
    target: list[int]
    weights: Any


def load(path: Path, embed: Callable[[list[str]], Any], np: Any) -> Corpus:
    from bench_recall import targets  # this folder is on the path when the script runs

    from daemon.ingest.claude_code import parse_claude_code
    from daemon.ingest.parser import ParseStats
    from daemon.ingest.transcripts import find_transcripts
    from daemon.search.ranking import kind_weight
    from store.events import canonical_json, digest
    from store.vectors import embedded_text

    questions = json.loads(path.read_text())["questions"]
    targets(questions)  # fails when a question shares a content word with its target
    texts: list[str] = []
    kinds: list[str] = []
    sessions: list[str] = []
    row_of: dict[str, int] = {}  # payload digest -> row: an event is stored once
    wanted: dict[tuple[str, int], str] = {}
    for name in sorted({q["file"] for q in questions}):
        for file in find_transcripts(FIXTURES / name):
            for index, event in enumerate(parse_claude_code(file, ParseStats())):
                key = digest(canonical_json(event["payload"]))
                if file == FIXTURES / name:
                    wanted[(name, index)] = key
                text = embedded_text(event["kind"], event["payload"])
                if text is None or key in row_of:
                    continue
                row_of[key] = len(texts)
                texts.append(text)
                kinds.append(event["kind"])
                sessions.append(event["session"])
    numbers = {session: n for n, session in enumerate(sorted(set(sessions)))}
    return Corpus(
        texts,
        kinds,
        np.array([numbers[s] for s in sessions]),
        embed(texts),
        embed([q["question"] for q in questions]),
        [row_of[wanted[(q["file"], q["event"])]] for q in questions],
        np.array([kind_weight(kind) for kind in kinds], dtype=np.float32),
    )


def figures(scores: Any, corpus: Corpus, np: Any) -> tuple[int, int]:
    """Questions whose target is in the first 5 over every session, and within its session."""
    overall = in_session = 0
    for row, target in enumerate(corpus.target):
        weighed = scores[row] * corpus.weights
        better = weighed > weighed[target]
        overall += int(better.sum()) < TOP
        in_session += int((better & (corpus.session == corpus.session[target])).sum()) < TOP
    return overall, in_session


def windows(text: str, size: int, step: int) -> list[str]:
    words = text.split()
    return [" ".join(words[start : start + size]) for start in range(0, max(1, len(words) - size + step), step)]


def best_passage(corpus: Corpus, embed: Callable[[list[str]], Any], np: Any, over: int, size: int, step: int) -> Any:
    """Each event's best cosine among its own and its passages' (windows of ``size`` words every
    ``step``, for texts of more than ``over`` words)."""
    passages: list[str] = []
    owner: list[int] = []
    for row, text in enumerate(corpus.texts):
        if len(text.split()) > over:
            cut = windows(text, size, step)
            passages += cut
            owner += [row] * len(cut)
    whole = corpus.queries @ corpus.vectors.T
    best = whole.copy()
    if passages:
        by_passage = corpus.queries @ embed(passages).T
        for row in range(len(best)):
            np.maximum.at(best[row], np.array(owner), by_passage[row])
    return whole, best


def variants(corpus: Corpus, embed: Callable[[list[str]], Any], np: Any) -> Iterator[tuple[str, Any]]:
    vectors, queries = corpus.vectors, corpus.queries
    cosine = queries @ vectors.T
    yield "baseline: the message's vector", cosine
    for over, size, step in ((40, 40, 20), (40, 20, 10), (100, 60, 30)):
        whole, best = best_passage(corpus, embed, np, over, size, step)
        yield f"best passage ({size} words every {step}, texts over {over})", best
        yield "  half whole, half best passage (the same)", (whole + best) / 2
    for k, beta in ((3, 0.3), (5, 0.6), (10, 1.0)):
        top = np.argsort(-cosine, axis=1)[:, :k]
        moved = queries + beta * vectors[top].mean(axis=1)
        moved /= np.linalg.norm(moved, axis=1, keepdims=True)
        yield f"query moved toward its top {k} (Rocchio, {beta})", moved @ vectors.T
    sessions = corpus.session.max() + 1
    centroids = np.stack([vectors[corpus.session == s].mean(axis=0) for s in range(sessions)])
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    by_session = (queries @ centroids.T)[:, corpus.session]
    yield "plus half the cosine with the session's mean vector", cosine + 0.5 * by_session
    neighbours = vectors @ vectors.T
    np.fill_diagonal(neighbours, -1.0)
    hub = np.sort(neighbours, axis=1)[:, -10:].mean(axis=1)
    yield "less each text's mean cosine with its 10 nearest texts (CSLS)", 2 * cosine - hub
    mean = vectors.mean(axis=0)
    u, s, _ = np.linalg.svd(np.cov((vectors - mean).T))
    for dims in (32, 128):
        white = u[:, :dims] / np.sqrt(s[:dims] + 1e-6)
        v, q = (vectors - mean) @ white, (queries - mean) @ white
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        yield f"whitened by the log's covariance, {dims} dimensions", q @ v.T
    words = np.array([len(text.split()) for text in corpus.texts])
    for least in (20, 25, 30):
        yield f"messages under {least} words left out", np.where(words >= least, cosine, -9.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not FIXTURES.is_dir():
        raise SystemExit(f"{FIXTURES} is absent: the shared fixtures are not checked out beside the project")
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from daemon.recall.model import load_embedder
    from daemon.recall.settings import RecallSettings

    model = load_embedder(RecallSettings().embedding_model)

    def embed(texts: list[str]) -> Any:
        return np.stack([np.frombuffer(vector, dtype="<f4") for vector in model.embed(texts)])

    results: dict[str, dict[str, list[int]]] = {}
    for name, path in SETS:
        corpus = load(path, embed, np)
        for variant, scores in variants(corpus, embed, np):
            results.setdefault(variant, {})[name] = list(figures(scores, corpus, np))
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{'in the first 5 (over the sessions / in session)':64} {'dev':>8} {'held out':>9}")
    for variant, by_set in results.items():
        dev, held = by_set["dev"], by_set["held out"]
        print(f"{variant:64} {dev[0]:>3} / {dev[1]:<3} {held[0]:>3} / {held[1]:<3}")


if __name__ == "__main__":
    main()
