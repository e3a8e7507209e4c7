"""The embedding model: WordLlama, loaded from the files of the wordllama package (or of the
folder ``recall.embedding_model_dir`` names), never downloaded.

WordLlama is a table of token embeddings taken from a large language model and trained to be
averaged: a text's embedding is the mean of its tokens' rows, which makes it fast on a CPU (tens of
thousands of texts a second) and coarse. Its default load path looks for the files in a cache and
downloads them when they are missing, so toka names the package's own folder as the cache and
forbids the download: a fresh install works offline, and a missing file is an error that says so.

wordllama (and numpy with it) is imported when the daemon first embeds, on a thread of its own;
nothing that starts a hook or the status line imports this module.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.errors import ConfigError
from store.vectors import pack

MODEL_FORM = re.compile(r"wordllama/(?P<config>[a-z0-9_]+)-(?P<dims>\d+)")
MODEL_HINT = (
    "set recall.embedding_model to wordllama/CONFIG-DIMS, e.g. wordllama/l2_supercat-256 (the model toka ships)"
)
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# The dimensions the shipped weights hold; fewer are a truncation of them (WordLlama is trained so).
SHIPPED_DIMS = 256


@dataclass(frozen=True, slots=True)
class ModelName:
    config: str
    dims: int

    @property
    def name(self) -> str:
        return f"wordllama/{self.config}-{self.dims}"


def model_name(text: str) -> ModelName:
    """``recall.embedding_model`` read; ConfigError when it is not of the form wordllama/CONFIG-DIMS."""
    found = MODEL_FORM.fullmatch(text.strip())
    if found is None:
        raise ConfigError(f"recall.embedding_model {text!r} is not a model toka can load", MODEL_HINT)
    return ModelName(found["config"], int(found["dims"]))


class Embedder:
    """A loaded model: texts in, packed unit vectors out. Thread-safe (one text batch at a time)."""

    def __init__(self, name: str, dims: int, model: Any) -> None:
        self.name, self.dims = name, dims
        self._model = model
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> list[bytes]:
        """The texts' embeddings, each of length 1, as float32 bytes."""
        with self._lock:
            vectors = self._model.embed(texts, norm=True)
        return [pack(vector) for vector in vectors]


@functools.cache
def load_embedder(model: str, model_dir: str = "") -> Embedder:
    """The model ``recall.embedding_model`` names, from ``model_dir`` or the wordllama package's files;
    loaded once per process (a failure is not remembered: the next call tries again).

    ConfigError (with the install or the setting to fix) when wordllama is not installed, the name
    is not one toka reads, or the files are not there.
    """
    wanted = model_name(model)
    # One BLAS thread: the daemon's vectors are a query and a few hundred texts at a time, which a
    # pool of BLAS threads (one per core, spinning after each call) only makes compete with the
    # daemon's own threads. Read when numpy is first imported, which is here.
    for variable in BLAS_THREADS:
        os.environ.setdefault(variable, "1")
    try:
        import wordllama
        from wordllama import WordLlama
    except ImportError:
        raise ConfigError(
            "semantic recall needs the wordllama package, which is not installed",
            "pip install wordllama (a dependency of toka: reinstall toka), or set recall.semantic = false",
        ) from None
    folder = Path(model_dir).expanduser() if model_dir else Path(wordllama.__file__).parent
    stored = SHIPPED_DIMS if not model_dir and wanted.config == "l2_supercat" else wanted.dims
    try:
        loaded = WordLlama.load(
            config=wanted.config,
            cache_dir=folder,
            dim=max(stored, wanted.dims),
            trunc_dim=wanted.dims if wanted.dims < stored else None,
            disable_download=True,
        )
    except (AttributeError, ValueError) as exc:
        raise ConfigError(f"recall.embedding_model {model!r}: {exc}", MODEL_HINT) from None
    except (FileNotFoundError, OSError) as exc:
        raise ConfigError(
            f"the files of recall.embedding_model {model!r} are not in {folder}: {exc}",
            "put WordLlama's weights/ and tokenizers/ in recall.embedding_model_dir, or use the model toka ships"
            " (wordllama/l2_supercat-256); toka never downloads a model",
        ) from None
    return Embedder(wanted.name, wanted.dims, loaded)
