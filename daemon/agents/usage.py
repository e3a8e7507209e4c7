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

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from daemon.agents.windows import LONG_CONTEXT_SUFFIX, LONG_WINDOW, known_window, largest_window
from daemon.contract.fill import ContextFill, context_fill, fill_pct, headroom_tokens
from daemon.contract.kinds import Kind
from store.base import EventQuery, EventStore
from store.events import Event, NewEvent, format_ts
from store.usage import Claims

MAIN_AGENT = "main"
# Claude Code's SessionStart hook names the model as the user chose it, `[1m]` suffix included.
SESSION_START = Kind.HOOK_SESSION_START
# Claude Code's own compaction (daemon/ingest/claude_code.py): ``pre_tokens`` is the context it
# compacted at, which bounds the window the agent ran with.
COMPACTION = Kind.COMPACTION
# Claude Code's status line input, as `toka hook claude-code --statusline` records it: its
# ``context_window.context_window_size`` is the window the agent itself works with.
STATUSLINE = Kind.STATUSLINE
# The kinds a session's figures are folded from.
FIGURE_KINDS = (Kind.USAGE, SESSION_START, COMPACTION, STATUSLINE)
# Usage events read per step back from a session's end in ``latest_context``: the latest
# main-chain response is nearly always among the last few (subagents interleave a handful).
_RECENT = 64


def _count(payload: dict[str, Any], name: str) -> int:
    value = payload.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def statusline_context(window: dict[str, Any]) -> int | None:
    """The context a status line's ``context_window`` says the agent holds: the prompt of
    ``current_usage`` (input, cache writes and cache reads), else ``used_percentage`` of
    ``context_window_size``; None when it says neither (before the session's first call)."""
    usage = window.get("current_usage")
    if isinstance(usage, dict):
        names = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        return sum(_count(usage, name) for name in names)
    used, size = window.get("used_percentage"), _count(window, "context_window_size")
    if isinstance(used, (int, float)) and not isinstance(used, bool) and used >= 0 and size:
        return round(size * used / 100)
    return None


@dataclass(frozen=True)
class Thresholds:
    """Percentages of the context window: the lifecycle's WARNING and CRITICAL, and where
    compression is considered."""

    warning_pct: float = 75.0
    critical_pct: float = 90.0
    compress_pct: float = 75.0

    def to_json(self) -> dict[str, float]:
        return {"warning_pct": self.warning_pct, "critical_pct": self.critical_pct, "compress_pct": self.compress_pct}


@dataclass
class PerCall:
    """Count, sum, min and max of one figure over the calls."""

    count: int = 0
    total: int = 0
    low: int | None = None
    high: int | None = None

    def add(self, value: int) -> None:
        self.count += 1
        self.total += value
        self.low = value if self.low is None else min(self.low, value)
        self.high = value if self.high is None else max(self.high, value)

    def to_json(self) -> dict[str, Any]:
        average = round(self.total / self.count, 1) if self.count else None
        return {"avg": average, "min": self.low, "max": self.high}


@dataclass
class UsageFigures:
    """The figures of a session (``agent`` None: context from the main chain, totals from every
    agent) or of one agent of it (everything from that agent's own calls)."""

    session: str
    agent: str | None = None
    model: str | None = None
    declared_model: str | None = None  # from Claude Code's SessionStart hook
    context_tokens: int | None = None
    reported_window: int | None = None
    compacted_at: int | None = None  # the context of the latest automatic compaction
    reported_at: int | None = None  # when the agent last reported its context itself (status line)
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_tokens: int = 0
    cache_read_tokens: int = 0
    last_ts: int | None = None
    prompt_per_call: PerCall = field(default_factory=PerCall)
    output_per_call: PerCall = field(default_factory=PerCall)
    # A request reported by transcript and telemetry both counts once (store/usage.py).
    claims: Claims = field(default_factory=Claims, repr=False, compare=False)

    def add(self, event: Event) -> None:
        payload = event.payload
        if event.kind == Kind.USAGE and not self.claims.counts(event.session, payload):
            return
        if event.kind == SESSION_START:
            if isinstance(payload.get("model"), str) and payload["model"]:
                self.declared_model = payload["model"]
            return
        if self.agent is not None and (event.agent or MAIN_AGENT) != self.agent:
            return
        if event.kind == STATUSLINE:
            self._statusline(event)
            return
        if event.kind == COMPACTION:
            if payload.get("trigger") == "auto" and (self.agent is not None or event.agent in (None, MAIN_AGENT)):
                self.compacted_at = _count(payload, "pre_tokens") or self.compacted_at
            return
        if payload.get("revision") is True:
            # More output of a response counted before, found once the response went on after
            # a followed file was read to its end (daemon/ingest/claude_code.py).
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
        self.output_per_call.add(_count(payload, "output_tokens"))
        if self.agent is None and (event.agent not in (None, MAIN_AGENT) or payload.get("sidechain") is True):
            return
        if "context_tokens" in payload:
            prompt = _count(payload, "context_tokens")
        else:
            prompt = sum(
                _count(payload, name) for name in ("input_tokens", "cache_creation_tokens", "cache_read_tokens")
            )
        self.prompt_per_call.add(prompt)
        if self.reported_at is None or event.ts >= self.reported_at:
            # A response older than the agent's own figure of its context (a status line) is
            # no longer what the context holds.
            self.context_tokens = prompt
        if isinstance(payload.get("model"), str):
            self.model = payload["model"]
        window = _count(payload, "context_window")
        if window:
            self.reported_window = window
        self.last_ts = event.ts

    def _statusline(self, event: Event) -> None:
        """Claude Code's status line input: its ``context_window`` is the agent's own figure of
        the moment: the window it works with and, from ``current_usage`` (or
        ``used_percentage``), the context it holds. Usage older than it moves the context no
        more."""
        model = event.payload.get("model")
        chosen = model.get("id") if isinstance(model, dict) else None
        if isinstance(chosen, str) and chosen.endswith(LONG_CONTEXT_SUFFIX):
            self.declared_model = chosen  # the 1M option, as the user chose it
        window = event.payload.get("context_window")
        if not isinstance(window, dict):
            return
        size = _count(window, "context_window_size")
        if size:
            self.reported_window = size
        context = statusline_context(window)
        if context is not None:
            self.context_tokens = context
            self.reported_at = event.ts

    def window(self, explicit: int | None = None, overrides: Mapping[str, int] | None = None) -> tuple[int, str]:
        """The context window and where it came from: ``agent`` (its own setting), ``reported``
        (by the agent: with the usage, as Codex does, or in Claude Code's status line),
        ``model`` (a ``[1m]`` model), ``config``, ``table`` (the model's default window: the one
        the agent gives it unless asked for more; daemon/agents/windows.py), ``observed`` (a
        prompt or a compaction larger than that was seen: the model ran with its largest),
        ``compaction`` (the agent compacted itself within the default window of a model that can
        take more: it ran with the default), or ``default`` (assumed).

        The largest window is taken only from evidence: the agent's own figure, a ``[1m]``
        model, or a context that did not fit the default."""
        if explicit:
            return explicit, "agent"
        if self.reported_window:
            return self.reported_window, "reported"
        declared = self.declared_model
        model = declared if declared and declared.endswith(LONG_CONTEXT_SUFFIX) else self.model or declared
        window, source = known_window(model, overrides)
        if source not in ("table", "default"):
            return window, source
        seen = max(self.prompt_per_call.high or 0, self.compacted_at or 0)
        largest = largest_window(model) or LONG_WINDOW
        bigger = largest if largest > window else LONG_WINDOW
        if window < seen <= bigger:
            # A context larger than the window it was said to fit: the model ran with its
            # largest (the API reports the model without Claude Code's `[1m]`); 1M for one the
            # table does not know, or gives no more than the default.
            return bigger, "observed"
        if source == "table" and self.compacted_at and window < largest:
            # The agent compacted itself within the default window: it did run with it.
            return window, "compaction"
        return window, source

    def fill_pct(self, window: int) -> float | None:
        return fill_pct(self.context_tokens, window)

    def context_fill(self, window: int, window_source: str) -> ContextFill:
        return context_fill(self.model or self.declared_model, self.context_tokens, window, window_source)

    def to_json(
        self,
        window: tuple[int, str] | None = None,
        thresholds: Thresholds | None = None,
    ) -> dict[str, Any]:
        size, source = window or self.window()
        limits = thresholds or Thresholds()
        context = self.context_tokens
        document: dict[str, Any] = {"session": self.session}
        if self.agent is not None:
            document["agent"] = self.agent
        document |= self.context_fill(size, source)
        document |= {
            "headroom_tokens": headroom_tokens(context, size),
            "thresholds": limits.to_json(),
            "tokens_until": {
                name: None if context is None else max(round(size * pct / 100) - context, 0)
                for name, pct in (
                    ("warning", limits.warning_pct),
                    ("critical", limits.critical_pct),
                    ("compression", limits.compress_pct),
                )
            },
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_tokens": self.cache_creation_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "calls": self.calls,
            "per_call": {
                "context_tokens": self.prompt_per_call.to_json(),
                "output_tokens": self.output_per_call.to_json(),
            },
            "last_usage_ts": None if self.last_ts is None else format_ts(self.last_ts),
        }
        return document


async def session_usage(store: EventStore, session: str, agent: str | None = None) -> UsageFigures:
    """The figures of one session (a full name), or of one agent of it, reading its usage
    events page by page."""
    figures = UsageFigures(session, agent)
    async for event in store.scan(EventQuery(session=session, kinds=FIGURE_KINDS)):
        figures.add(event)
    return figures


async def latest_context(
    store: EventStore, session: str, agent: str | None = None, kinds: Collection[str] | None = None
) -> UsageFigures:
    """The context figures (model, context tokens, window) of one session, or of one agent of
    it, cheaply.

    Reads the session's usage events backwards, a few at a time, until the latest main-chain
    response is among them, and folds those in order with :meth:`UsageFigures.add`: the same
    model, fill and window as :func:`session_usage` gives, at a cost that does not grow with the
    session. The cumulative counts cover the events read only; use ``session_usage`` for them.
    ``kinds``: the kinds the session holds, when the caller knows them: the model a SessionStart
    hook named and the latest compaction are looked up only where there are some (a query each).
    """
    figures = UsageFigures(session, agent)
    # The latest SessionStart and status line; the latest compaction (two: in a log imported
    # before the summary record had a kind of its own, `compaction.summary`, it followed its
    # boundary, the record with the trigger, as a `compaction` too).
    for kind, limit in ((SESSION_START, 1), (COMPACTION, 2), (STATUSLINE, 1)):
        if kinds is not None and kind not in kinds:
            continue
        for event in reversed(await store.query(EventQuery(session=session, kinds=(kind,), order="desc", limit=limit))):
            figures.add(event)
    before: int | None = None
    while True:
        page = await store.query(
            EventQuery(session=session, kinds=(Kind.USAGE,), before_seq=before, limit=_RECENT, order="desc")
        )
        for event in reversed(page):
            figures.add(event)
        if figures.context_tokens is not None or len(page) < _RECENT:
            return figures
        before = page[-1].seq


async def output_revisions(store: EventStore, held: list[tuple[NewEvent, Event]]) -> list[NewEvent]:
    """Revisions for responses that writers report with more output than the log counted.

    A response's usage is stored once, under its key. A file read again from an earlier point (a
    crash between storing what was read and saving the watch cursor, or an import of a file that
    grew in the middle of a response) reports the response again with the output it reached
    since; the log answers with the event it holds, and the difference would be lost. It is
    added as a revision keyed by the new total, as the importer keys its own revisions
    (daemon/ingest/claude_code.py), so it is added once however often it is reported."""
    revisions = []
    for new, stored in held:
        payload = new.payload
        reported = _count(payload, "output_tokens")
        if (
            new.kind != Kind.USAGE
            or stored.kind != Kind.USAGE
            or new.key is None
            or payload.get("revision") is True
            or not isinstance(payload.get("message_id"), str)
            or reported <= _count(stored.payload, "output_tokens")
        ):
            continue
        counted = await _counted_output(store, stored)
        if reported > counted:
            revision = {
                "model": payload.get("model"),
                "output_tokens": reported - counted,
                "context_tokens": _count(payload, "context_tokens"),
                "message_id": payload["message_id"],
                "request_id": payload.get("request_id"),
                "sidechain": payload.get("sidechain") is True,
                "revision": True,
            }
            if isinstance(payload.get("speed"), str):  # its output is priced as its response's
                revision["speed"] = payload["speed"]
            key = f"{new.key}:+{reported}"
            revisions.append(NewEvent(stored.session, "usage", revision, stored.agent, new.ts, None, key))
    return revisions


async def _counted_output(store: EventStore, stored: Event) -> int:
    """The output the log counts for the response ``stored`` holds: its own and its revisions'."""
    response = (stored.payload.get("message_id"), stored.payload.get("request_id"))
    counted = _count(stored.payload, "output_tokens")
    async for event in store.scan(EventQuery(session=stored.session, kinds=(Kind.USAGE,), after_seq=stored.seq)):
        payload = event.payload
        if payload.get("revision") is True and (payload.get("message_id"), payload.get("request_id")) == response:
            counted += _count(payload, "output_tokens")
    return counted
