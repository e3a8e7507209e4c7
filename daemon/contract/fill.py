"""The context-fill figures: how full an agent's context window is. The usage document, an agent,
a lifecycle change and the status line all carry them; :func:`context_fill` builds them for each,
and readers (the CLI's status line and hook, the TUI) read this type."""

from typing import TypedDict

# No `from __future__ import annotations`: TypedDict reads its annotations evaluated.


class ContextFill(TypedDict):
    model: str | None
    context_tokens: int | None  # the latest main-chain prompt: what the window holds
    context_window: int
    window_source: str  # where the window came from (daemon/agents/usage.py, UsageFigures.window)
    fill_pct: float | None  # context_tokens of context_window, to one decimal


def fill_pct(context_tokens: int | None, window: int) -> float | None:
    return None if context_tokens is None else round(100 * context_tokens / window, 1)


def headroom_tokens(context_tokens: int | None, window: int) -> int | None:
    """What is left of the window (never below 0), None while the fill is unknown."""
    return None if context_tokens is None else max(window - context_tokens, 0)


def context_fill(model: str | None, context_tokens: int | None, window: int, window_source: str) -> ContextFill:
    return {
        "model": model,
        "context_tokens": context_tokens,
        "context_window": window,
        "window_source": window_source,
        "fill_pct": fill_pct(context_tokens, window),
    }
