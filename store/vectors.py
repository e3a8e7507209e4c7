"""Vectors of the events worth recalling: what text an event is embedded from, and the index
each backend keeps them in (docs/recall.md).

Embeddings are made by the daemon (daemon/recall/), off the write path: an append never waits
for them. The daemon follows the log by a cursor and hands each batch of vectors to
:meth:`VectorIndex.add`, which stores them with the cursor's new position in one transaction, so a
restart neither loses nor repeats a batch. The cursor names the model the vectors were made by;
vectors of another model are never compared with a query's, and a change of model empties the
index, which the daemon then fills again.

A vector is the model's embedding normalised to length 1 and stored as little-endian float32
(:func:`pack`), so its dot product with a query's is their cosine similarity on every backend.
The index answers exact nearest neighbours (every vector the filters leave is compared), which
is why SQLite's and PostgreSQL's answers are the same.

What is embedded: the text of messages, notes, memory values, compression and compaction
summaries, handoffs and session titles, as search indexes it (store/search.py's
``indexed_text``), cut to :data:`MAX_EMBEDDED_CHARS`; not tool calls or their output by default
(they hold code and logs, which a question in words rarely means), and not messages of fewer than
:data:`MIN_MESSAGE_WORDS` words ("Now let me check the tests and run the build:"): an agent's
running commentary says little, and an average of few words stands close to every question
(on the held-out questions of benchmarks/bench_recall.py, leaving them out, with the fusion's
cosine floor lowered, took the meant message into the first five of its session for 11 questions
of 20 instead of 8; a model may ask for more words, as MiniLM does, daemon/recall/model.py). A note, a memory value or
a summary is recalled however short (:data:`MIN_WORDS`): it was written to be.
"""

from __future__ import annotations

import abc
import json
from dataclasses import dataclass
from typing import Any

from store.kinds import kind_taken
from store.search import SearchQuery, indexed_text, tokens

# The kinds embedded unless the settings say otherwise (recall.embedded_kinds).
EMBEDDED_KINDS = (
    "message",
    "note.*",
    "memory.set",
    "compression",
    "compaction",
    "compaction.summary",
    "handoff",
    "session.title",
)
# An embedding model averages what it reads: past a few pages, more text only blurs the meaning.
MAX_EMBEDDED_CHARS = 4000
# Fewer words than these say too little to be recalled by meaning (they are still found by words):
# a message, and anything else.
MIN_MESSAGE_WORDS = 16
MIN_WORDS = 3
# The cursor (store/cursors.py) that says how far the vectors reach and which model made them.
CURSOR = "embeddings"


def embedded_text(
    kind: str, payload: dict[str, Any], kinds: tuple[str, ...] = EMBEDDED_KINDS, message_words: int = MIN_MESSAGE_WORDS
) -> str | None:
    """The text an event is embedded from, or None when it is not embedded; ``message_words``: the
    fewest words of a message embedded, which the model decides (daemon/recall/model.py)."""
    if not kind_taken(kind, kinds):
        return None
    text = indexed_text(kind, payload)
    least = message_words if kind in ("message", "thinking") else MIN_WORDS
    if text is None or len(tokens(text[:MAX_EMBEDDED_CHARS])) < least:
        return None
    return text[:MAX_EMBEDDED_CHARS]


def pack(vector: Any) -> bytes:
    """A vector (a sequence of floats, or a numpy array) as little-endian float32 bytes."""
    import numpy as np  # numpy is only needed where vectors are made or compared

    return np.asarray(vector, dtype="<f4").tobytes()


def unpack_dot(a: bytes, b: bytes) -> float:
    """The dot product of two packed vectors: their cosine, as both are of length 1."""
    import numpy as np

    return float(np.frombuffer(a, dtype="<f4") @ np.frombuffer(b, dtype="<f4"))


@dataclass(frozen=True, slots=True)
class VectorState:
    """How far the vectors reach: the model that made them (None: none yet), the last seq the
    embedder has read past (embedded or not), and how many vectors are stored."""

    model: str | None
    seq: int
    count: int

    def cursor_value(self) -> str:
        return json.dumps({"model": self.model, "seq": self.seq})


def read_state(value: str | None, count: int) -> VectorState:
    """The state a cursor's value tells (store/cursors.py), with the count of vectors."""
    if value is None:
        return VectorState(None, 0, count)
    saved = json.loads(value)
    return VectorState(saved.get("model"), int(saved.get("seq", 0)), count)


@dataclass(frozen=True, slots=True)
class VectorHit:
    """An event whose vector is near the query's: ``similarity`` is their cosine (1 is the same
    direction); ``text`` what it was embedded from."""

    seq: int
    id: str
    session: str
    agent: str | None
    kind: str
    ts: int
    digest: str
    similarity: float
    text: str


class VectorIndex(abc.ABC):
    """The vectors a backend keeps, with the cursor of the embedder that fills them."""

    @property
    @abc.abstractmethod
    def method(self) -> str:
        """How nearest neighbours are found, for doctor (``sqlite-vec``, ``numpy``, ``pgvector``)."""

    @abc.abstractmethod
    async def state(self) -> VectorState: ...

    @abc.abstractmethod
    async def add(self, rows: list[tuple[int, bytes]], state: VectorState) -> None:
        """Store ``rows`` (seq, packed vector) and move the cursor to ``state``, in one transaction."""

    @abc.abstractmethod
    async def clear(self, model: str) -> None:
        """Drop every vector and start the cursor over for ``model``."""

    @abc.abstractmethod
    async def nearest(self, vector: bytes, query: SearchQuery) -> list[VectorHit]:
        """The ``query.limit`` events nearest ``vector`` that ``query``'s filters leave (its text
        is not read), nearest first."""
