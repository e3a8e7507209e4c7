"""The ``[recall]`` section of config.toml: whether events are embedded for semantic recall, by
which model, and which kinds. Declared here, with the component, and listed with every section in
daemon/sections.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from daemon.setting import setting
from store.vectors import EMBEDDED_KINDS

# The model a fresh install embeds with: WordLlama's l2_supercat, 256 dimensions, whose weights and
# tokenizer come inside the wordllama package.
DEFAULT_MODEL = "wordllama/l2_supercat-256"


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
        "the embedding model, as wordllama/CONFIG-DIMS: l2_supercat-256 ships with toka; 64 or 128 dimensions"
        " are faster and coarser; another config (l3_supercat-1024) is read from embedding_model_dir;"
        " minilm/all-MiniLM-L6-v2-int8 (the minilm extra) finds more and embeds far slower; two joined by +"
        " embed with both; a change re-embeds",
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
