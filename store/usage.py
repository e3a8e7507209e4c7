"""What a ``usage`` event counts, whichever agent wrote it.

Two conventions reach the log. Anthropic's (Claude Code, toka's own clients): ``input_tokens``
is the uncached input, with ``cache_creation_tokens`` (of them ``cache_creation_1h_tokens``
kept for an hour) and ``cache_read_tokens`` beside it. OpenAI's (Codex): ``input_tokens``
includes ``cached_input_tokens``, which are cache reads. :func:`usage_counts` reads either as
the same :class:`UsageCounts`. A ``revision`` (more output of a response counted before; see
daemon/ingest/claude_code.py) adds output and nothing else: it is no call of its own.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

# Prompt sizes at which a price may change: every tier start of the price table toka ships
# (daemon/cost/model_prices.json; a test keeps the two in step). Usage is kept per class of
# prompt between them, so that the calls of a class, summed, are priced as each call would be.
PROMPT_CLASSES = (32_000, 100_000, 128_000, 199_999, 200_000, 256_000, 272_000, 512_000, 524_288)


def _count(payload: dict[str, Any], name: str) -> int:
    value = payload.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


@dataclass(frozen=True, slots=True)
class UsageCounts:
    """One usage event's tokens: ``input`` is uncached input; ``prompt`` the call's whole input."""

    calls: int
    input: int
    output: int
    cache_creation: int
    cache_creation_1h: int
    cache_read: int
    prompt: int


def usage_counts(payload: dict[str, Any]) -> UsageCounts:
    """The tokens a usage event's payload counts, in one convention."""
    output = _count(payload, "output_tokens")
    if payload.get("revision") is True:
        return UsageCounts(0, 0, output, 0, 0, 0, _count(payload, "context_tokens"))
    if "cached_input_tokens" in payload:  # OpenAI's counts: input already includes cached
        whole = _count(payload, "input_tokens")
        cached = min(_count(payload, "cached_input_tokens"), whole)
        return UsageCounts(1, whole - cached, output, 0, 0, cached, whole)
    uncached = _count(payload, "input_tokens")
    creation = _count(payload, "cache_creation_tokens")
    read = _count(payload, "cache_read_tokens")
    hour = min(_count(payload, "cache_creation_1h_tokens"), creation)
    return UsageCounts(1, uncached, output, creation, hour, read, uncached + creation + read)


def prompt_class(prompt: int) -> int:
    """The class of a call's whole prompt: how many of PROMPT_CLASSES it is above."""
    return bisect_left(PROMPT_CLASSES, prompt)


def class_prompt(index: int) -> int:
    """A prompt size of class ``index``: the smallest above its lower bound."""
    return 0 if index == 0 else PROMPT_CLASSES[index - 1] + 1
