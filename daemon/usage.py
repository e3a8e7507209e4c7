"""A session's token figures, projected from its ``usage`` events.

Two figures are kept apart (DESIGN.md, "Sessions, agents and tokens"):

- context fill: the size of the latest main-chain prompt, which is what the context window
  limits. For Anthropic usage that is input + cache creation + cache read of the latest response
  of the main agent (subagents and sidechains have windows of their own); for Codex it is the
  latest call's ``last_token_usage``, as the importer records it in ``context_tokens``;
- cumulative usage: the sum over every call of every agent, which is what costs money.

Thresholds apply to the first, never the second. Because the figures are a fold over events,
replaying the log gives the same figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.base import EventQuery, EventStore
from store.events import Event, format_ts

# The window assumed when no usage event reports one: every current Claude model's default.
DEFAULT_WINDOW = 200_000
# Models whose name ends so run with a one-million-token window (Claude Code's `[1m]` models).
LONG_CONTEXT_SUFFIX = "[1m]"
LONG_WINDOW = 1_000_000
MAIN_AGENT = "main"
_PAGE = 5000
# Usage events read per step back from a session's end in ``latest_context``: the latest
# main-chain response is nearly always among the last few (subagents interleave a handful).
_RECENT = 64


def _count(payload: dict[str, Any], name: str) -> int:
    value = payload.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


@dataclass
class UsageFigures:
    session: str
    model: str | None = None
    context_tokens: int | None = None
    reported_window: int | None = None
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_tokens: int = 0
    cache_read_tokens: int = 0
    last_ts: int | None = None

    def add(self, event: Event) -> None:
        payload = event.payload
        if payload.get("revision") is True:
            # More output of a response counted before, found once the response went on after
            # a followed file was read to its end (daemon/importers/claude_code.py).
            self.output_tokens += _count(payload, "output_tokens")
            return
        self.calls += 1
        if "cached_input_tokens" in payload:  # OpenAI's counts: input already includes cached
            cached = _count(payload, "cached_input_tokens")
            self.input_tokens += max(_count(payload, "input_tokens") - cached, 0)
            self.cache_read_tokens += cached
        else:
            self.input_tokens += _count(payload, "input_tokens")
            self.cache_creation_tokens += _count(payload, "cache_creation_tokens")
            self.cache_read_tokens += _count(payload, "cache_read_tokens")
        self.output_tokens += _count(payload, "output_tokens")
        if event.agent not in (None, MAIN_AGENT) or payload.get("sidechain") is True:
            return
        if "context_tokens" in payload:
            self.context_tokens = _count(payload, "context_tokens")
        else:
            self.context_tokens = sum(
                _count(payload, name) for name in ("input_tokens", "cache_creation_tokens", "cache_read_tokens")
            )
        if isinstance(payload.get("model"), str):
            self.model = payload["model"]
        window = _count(payload, "context_window")
        if window:
            self.reported_window = window
        self.last_ts = event.ts

    @property
    def window(self) -> tuple[int, str]:
        """The context window and where it came from: reported, model or default (assumed)."""
        if self.reported_window:
            return self.reported_window, "reported"
        if self.model is not None and self.model.endswith(LONG_CONTEXT_SUFFIX):
            return LONG_WINDOW, "model"
        return DEFAULT_WINDOW, "default"

    def to_json(self) -> dict[str, Any]:
        window, source = self.window
        fill = None if self.context_tokens is None else round(100 * self.context_tokens / window, 1)
        return {
            "session": self.session,
            "model": self.model,
            "context_tokens": self.context_tokens,
            "context_window": window,
            "window_source": source,
            "fill_pct": fill,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_tokens": self.cache_creation_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "calls": self.calls,
            "last_usage_ts": None if self.last_ts is None else format_ts(self.last_ts),
        }


async def session_usage(store: EventStore, session: str) -> UsageFigures:
    """The figures of one session (a full name), reading its usage events page by page."""
    figures = UsageFigures(session)
    after = 0
    while True:
        page = await store.query(EventQuery(session=session, kinds=("usage",), after_seq=after, limit=_PAGE))
        for event in page:
            figures.add(event)
        if len(page) < _PAGE:
            return figures
        after = page[-1].seq


async def latest_context(store: EventStore, session: str) -> UsageFigures:
    """The context figures (model, context tokens, window) of one session, cheaply.

    Reads the session's usage events backwards, a few at a time, until the latest main-chain
    response is among them, and folds those in order with :meth:`UsageFigures.add`: the same
    model, fill and window as :func:`session_usage` gives, at a cost that does not grow with the
    session. The cumulative counts cover the events read only; use ``session_usage`` for them.
    """
    figures = UsageFigures(session)
    before: int | None = None
    while True:
        page = await store.query(
            EventQuery(session=session, kinds=("usage",), before_seq=before, limit=_RECENT, order="desc")
        )
        for event in reversed(page):
            figures.add(event)
        if figures.context_tokens is not None or len(page) < _RECENT:
            return figures
        before = page[-1].seq
