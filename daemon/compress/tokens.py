"""Token estimates for text that has no count from the provider yet.

A provider reports what a prompt cost only after it was sent; compression has to choose what to
keep *before* that, so it estimates. ``estimator()`` gives one of two estimators behind one
``Estimator`` protocol:

- ``tiktoken``: the exact count of an OpenAI encoding (``o200k_base``, else ``cl100k_base``), used
  only when the ``tiktoken`` package is installed and the encoding's file is already in its local
  cache: toka never downloads one. It is exact for OpenAI models and a close proxy for others.
- ``heuristic``: one regular-expression pass that counts the pieces a BPE tokenizer tends to make:
  a word of up to ``WORD_PIECE`` letters (with the space before it) is one piece and a longer word
  one per ``WORD_PIECE`` letters, digits go in groups of three, each CJK character (and kana,
  hangul) is a piece, other non-ASCII letters go in pairs, punctuation in runs of up to three,
  and a run of newlines or of indentation is a piece. The count is scaled by ``SCALE``. The
  constants were tuned on the Claude Code transcripts of ../shared/fixtures (docs/benchmarks.md,
  "Token estimation"), where the heuristic is markedly closer to the reported usage than
  characters ÷ 4; on other text and other tokenizers, expect it to be less close.

``auto`` (the default) is ``tiktoken`` when it is usable offline, else ``heuristic``.

``event_tokens`` estimates what an event costs once it is part of a context: the readable text of
its payload (a message's or thinking's text, a tool call's name and compact JSON input, a tool
result's output, anything else as compact JSON) plus ``MESSAGE_OVERHEAD`` for the framing each
block gets. Nothing is cached across calls, so memory stays flat however many sessions are
estimated.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Protocol

from daemon.contract.kinds import Kind
from store.events import Event

# Letters a BPE vocabulary commonly covers in one token: words up to this length (with the space
# before them) are one piece; longer ones (identifiers, rare words) one piece per this many.
WORD_PIECE = 8
# Pieces to tokens: Claude's tokenizer splits text a little finer than the pieces counted here.
SCALE = 1.1
# Framing around each block of a conversation (role, block type...).
MESSAGE_OVERHEAD = 4
# A tool call and its result carry more: the tool-use id twice, the call's wrapper, and what an
# agent adds to each result. Fitted on the fixtures (about 80 tokens per call and result).
TOOL_OVERHEAD = 40
# Thinking whose text the provider withheld still fills the context; its signature (the encrypted
# thinking, base64) grows with it, at about this many tokens per character on the fixtures.
HIDDEN_THINKING_PER_SIGNATURE_CHAR = 0.3
# An image costs by its pixels, not by its base64 size (Anthropic: width × height / 750, images
# being scaled to about 1.15 megapixels); without decoding it, assume a typical screenshot's.
IMAGE_TOKENS = 1_500

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
_PIECE = re.compile(
    rf" ?[A-Za-z]{{1,{WORD_PIECE}}}"  # a word, or a piece of a long one
    r"| ?[0-9]{1,3}"  # digits in groups of three
    rf"|[{_CJK}]"  # one CJK character, kana or hangul syllable each
    rf"|[^\x00-\x7f{_CJK}\s]{{1,2}}"  # other non-ASCII letters and symbols, in pairs
    r"| ?[!-/:-@\[-`{-~]{1,3}"  # punctuation and symbols, in runs of up to three
    r"|\n+|[ \t]{2,}|\s"  # newlines; indentation; a space not taken by a word
)


class Estimator(Protocol):
    """Counts the tokens of a text."""

    name: str

    def count(self, text: str) -> int: ...


class HeuristicEstimator:
    """The built-in estimate: BPE-like pieces counted by one regular expression (module docstring)."""

    name = "heuristic"

    def count(self, text: str) -> int:
        if not text:
            return 0
        return max(1, round(len(_PIECE.findall(text)) * SCALE))


class CharsEstimator:
    """Characters ÷ 4: the rule of thumb the heuristic is measured against."""

    name = "chars/4"

    def count(self, text: str) -> int:
        return math.ceil(len(text) / 4)


class TiktokenEstimator:
    """The exact count of a tiktoken encoding that is already cached locally."""

    name = "tiktoken"

    def __init__(self, encoding: Any) -> None:
        self._encoding = encoding
        self.name = f"tiktoken:{encoding.name}"

    def count(self, text: str) -> int:
        # disallowed_special=() counts "<|endoftext|>" in a transcript as text instead of raising.
        return len(self._encoding.encode(text, disallowed_special=()))


@lru_cache(maxsize=1)  # one entry: whether an encoding could be loaded, decided once per process
def _offline_tiktoken() -> TiktokenEstimator | None:
    try:
        import tiktoken  # not a dependency: used when present
        import tiktoken.load
    except ImportError:
        return None

    def refuse_download(blobpath: str) -> bytes:
        raise OSError(f"{blobpath} is not cached locally")

    # tiktoken reads a cached file without touching the network and fetches a missing one with
    # read_file; replacing read_file makes a missing encoding fail here instead of downloading.
    fetch = tiktoken.load.read_file
    tiktoken.load.read_file = refuse_download
    try:
        for name in ("o200k_base", "cl100k_base"):
            try:
                return TiktokenEstimator(tiktoken.get_encoding(name))
            except (OSError, ValueError, KeyError):
                continue
    finally:
        tiktoken.load.read_file = fetch
    return None


_HEURISTIC = HeuristicEstimator()
ESTIMATORS = ("auto", "heuristic", "tiktoken", "chars")


def estimator(name: str = "auto") -> Estimator:
    """The estimator called ``name``: "heuristic", "tiktoken" (ValueError when it is not usable
    offline), "chars" (characters ÷ 4, for comparison) or "auto" (tiktoken when usable, else the
    heuristic)."""
    if name == "heuristic":
        return _HEURISTIC
    if name == "chars":
        return CharsEstimator()
    if name in ("tiktoken", "auto"):
        exact = _offline_tiktoken()
        if exact is not None:
            return exact
        if name == "tiktoken":
            raise ValueError("tiktoken is not installed, or none of its encodings is cached locally")
        return _HEURISTIC
    raise ValueError(f"unknown estimator {name!r}: use one of {', '.join(ESTIMATORS)}")


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str)


def payload_tokens(kind: str, payload: Mapping[str, Any], est: Estimator | None = None) -> int:
    """What an event of ``kind`` with ``payload`` costs in a context (see ``event_tokens``)."""
    count = (est or _HEURISTIC).count
    if kind == Kind.MESSAGE:
        text = payload.get("text")
        body = count(text) if isinstance(text, str) else count(_COMPACT.encode(payload))
    elif kind == Kind.THINKING:
        text = payload.get("text")
        signature = payload.get("signature")
        if text and isinstance(text, str):
            body = count(text)
        elif isinstance(signature, str):
            body = round(len(signature) * HIDDEN_THINKING_PER_SIGNATURE_CHAR)
        else:
            body = 0
    elif kind == Kind.TOOL_CALL:
        tool = payload.get("tool")
        body = count(tool if isinstance(tool, str) else "") + count(_COMPACT.encode(payload.get("input")))
        return body + TOOL_OVERHEAD
    elif kind == Kind.TOOL_RESULT:
        output = payload.get("output")
        body = count(output if isinstance(output, str) else _COMPACT.encode(output))
        return body + TOOL_OVERHEAD
    elif kind == Kind.BLOCK and payload.get("type") == "image":
        body = IMAGE_TOKENS
    else:
        body = count(_COMPACT.encode(payload))
    return body + MESSAGE_OVERHEAD


def event_tokens(event: Event, est: Estimator | None = None) -> int:
    """What ``event`` would cost in a context: its readable text by ``est`` (the heuristic by
    default) plus ``MESSAGE_OVERHEAD``."""
    return payload_tokens(event.kind, event.payload, est)
