"""`toka doctor`'s look at semantic recall (docs/recall.md): on or off, the model, how the
vectors are searched, and how far the embeddings are behind the log."""

from __future__ import annotations

from daemon.client.doctor import recall_status
from daemon.paths import Paths
from store.errors import TokaError
from toka_cli.doctor_check import Check

# Events still to embed past which the check warns: the embedder reads thousands a second, so a
# backlog this size that stays means it is not keeping up or has stopped.
BEHIND_WARNING = 10_000


def recall_check(paths: Paths) -> Check:
    if not paths.socket.exists():
        return Check("recall", "ok", "the daemon is not running")
    try:
        status = recall_status(paths)
    except TokaError as exc:
        return Check("recall", "ok", f"not asked: {exc.message}")
    if not status["semantic"]:
        return Check("recall", "ok", "semantic recall is off (recall.semantic = false): search finds words only")
    if status["problem"]:
        # A backend without vectors (a PostgreSQL server without pgvector) keeps the log and finds
        # words: a warning. A model that does not load is a setting that does not work: a problem.
        return Check(
            "recall",
            "warning" if status["problem_in"] == "index" else "problem",
            f"semantic recall cannot run: {status['problem']}",
            status["hint"] or "toka daemon restart",
        )
    if status["embedded"] is None:
        return Check("recall", "ok", f"{status['model']}: starting")
    shown = (
        f"on: {status['model']}, {status['embedded']} events embedded, searched with {status['method']};"
        f" {status['behind']} events behind the log"
    )
    if (status["behind"] or 0) > BEHIND_WARNING:
        return Check(
            "recall",
            "warning",
            shown,
            "wait for it to catch up; the daemon's log (logs/daemon.log) says why if it does not",
        )
    return Check("recall", "ok", shown)
