"""Every vector of the SQLite log in one matrix in memory, for the searches by meaning that are not
narrowed to a session, an agent or a time (store/sqlite/vectors.py).

Reading 100,000 vectors of 1 KiB out of SQLite for each such search took a quarter of a second
(docs/benchmarks.md, "Semantic recall"); one product of the matrix with the query takes a few
milliseconds. The matrix is read on the first such search and grown by each batch the store adds
(only this store writes its file, so it cannot fall behind), at the memory of the vectors: 1 KiB
per embedded event at 256 dimensions. The events of the best candidates are then read by seq with
the search's kinds applied, so a pruned event, or one of another kind, is never returned.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from store.query import narrowing_terms
from store.search import SearchQuery
from store.vectors import VectorHit

# Candidates read per round, per hit wanted: the kinds asked for may leave some out.
CANDIDATES_PER_HIT = 4


@dataclass(frozen=True, slots=True)
class Matrix:
    """The vectors' seqs and the matrix of their vectors, row by row; never changed once made."""

    seqs: Any  # numpy int64 array
    vectors: Any  # numpy float32 matrix

    @staticmethod
    def read(db: sqlite3.Connection) -> Matrix:
        import numpy as np

        rows = db.execute("SELECT seq, vector FROM vectors ORDER BY seq").fetchall()
        return Matrix.of([seq for seq, _ in rows], [vector for _, vector in rows], np)

    @staticmethod
    def of(seqs: list[int], vectors: list[bytes], np: Any) -> Matrix:
        matrix = np.frombuffer(b"".join(vectors), dtype="<f4").reshape(len(vectors), -1) if vectors else None
        return Matrix(np.asarray(seqs, dtype=np.int64), matrix)

    def grown(self, rows: list[tuple[int, bytes]]) -> Matrix:
        """This matrix with ``rows`` added (a vector stored again replaces none: seqs are new)."""
        import numpy as np

        more = Matrix.of([seq for seq, _ in rows], [vector for _, vector in rows], np)
        if self.vectors is None or more.vectors is None:
            return more if self.vectors is None else self
        if more.vectors.shape[1] != self.vectors.shape[1]:
            return more
        return Matrix(np.concatenate([self.seqs, more.seqs]), np.concatenate([self.vectors, more.vectors]))


def nearest_in(db: sqlite3.Connection, matrix: Matrix, vector: bytes, query: SearchQuery) -> list[VectorHit]:
    """The ``query.limit`` events nearest ``vector`` of the kinds ``query`` asks for, by the matrix;
    the events and their texts read by seq."""
    import numpy as np

    if matrix.vectors is None:
        return []
    scores = matrix.vectors @ np.frombuffer(vector, dtype="<f4")
    filters, params = narrowing_terms(query)
    found: list[VectorHit] = []
    step = max(query.limit * CANDIDATES_PER_HIT, 64)

    # The best ``step`` first, picked without sorting them all (a sort of 100,000 scores costs
    # twice the product); a second round, when the kinds left too few, sorts the rest.
    def rounds() -> Iterator[Any]:
        if len(scores) <= step:
            yield np.arange(len(scores))
            return
        best = np.argpartition(-scores, step - 1)[:step]
        yield best
        yield np.setdiff1d(np.arange(len(scores)), best, assume_unique=True)

    for candidates in rounds():
        order = candidates[np.lexsort((matrix.seqs[candidates], -scores[candidates]))]
        for start in range(0, len(order), step):
            chosen = order[start : start + step]
            score_of = {int(matrix.seqs[i]): float(scores[i]) for i in chosen}
            marks = ", ".join("?" * len(score_of))
            rows = db.execute(
                "SELECT e.seq, e.id, e.session, e.agent, e.kind, e.ts, e.digest, t.text FROM events e"
                f" LEFT JOIN search_text t ON t.seq = e.seq WHERE e.seq IN ({marks})" + filters,
                [*score_of, *params],
            ).fetchall()
            for seq, event_id, session, agent, kind, ts, digest, text in rows:
                found.append(VectorHit(seq, event_id, session, agent, kind, ts, digest, score_of[seq], text or ""))
            if len(found) >= query.limit:
                break
        if len(found) >= query.limit:
            break
    found.sort(key=lambda hit: (-hit.similarity, hit.seq))
    return found[: query.limit]
