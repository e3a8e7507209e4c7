"""What a ``usage`` event counts, whichever agent wrote it.

Two conventions reach the log. Anthropic's (Claude Code, toka's own clients): ``input_tokens``
is the uncached input, with ``cache_creation_tokens`` (of them ``cache_creation_1h_tokens``
kept for an hour) and ``cache_read_tokens`` beside it. OpenAI's (Codex): ``input_tokens``
includes ``cached_input_tokens``, which are cache reads. :func:`usage_counts` reads either as
the same :class:`UsageCounts`. A ``revision`` (more output of a response counted before; see
daemon/ingest/claude_code.py) adds output and nothing else: it is no call of its own.

One request may reach the log twice: from the agent's transcript and from its telemetry
(daemon/otel/, whose usage payloads say ``origin: "telemetry"``). It counts once, as the first
source that reported it (in log order): :func:`usage_names` names a request the same way
whichever source wrote it, and a usage event of a request another source already reported counts
nothing. A source's own later events of that request (a transcript's revisions) still count.

A request is named by Anthropic's ``request_id`` when the source has it, and besides by its
model and prompt size, which both sources always have. Either source may lack the id (an API
behind a gateway or a cloud provider returns none; then both usually do), so an event without
one is matched by size to any report of the same size, and an event with one by its id, or by
size to a report without an id only: two requests of equal size whose ids tell them apart are
never taken for one. Where one source lacks the ids, a report of its stands for every report of
that size from the other; prompts grow as a session goes on, so equal sizes are rare within
one. OpenAI's counts carry no id: a Codex call is named by its four counts.

Each row keeps how many of its calls came from telemetry (``telemetry_calls``), so reports say
which source they used. :class:`Claims` decides, in memory or over the claims an SQL backend
read from its ``usage_requests`` table for the batch (and then writes back :attr:`Claims.new`).

The usage projection (:class:`UsageRow`) is what the SQLite backend keeps up to date in each
append's transaction (store/sqlite/projections.py) and reports read instead of the events: per
quarter of an hour, session, agent, model and prompt class (which also says whether the calls
were served in fast mode), the calls and tokens. Backends
without the table fold the usage events with :func:`usage_row` and :func:`fold_usage`
(``EventStore.usage_rows``), which gives the same rows.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

# Prompt sizes at which a price may change: every tier start of the price table toka ships
# (daemon/cost/model_prices.json; a test keeps the two in step). Usage is kept per class of
# prompt between them, so that the calls of a class, summed, are priced as each call would be.
PROMPT_CLASSES = (32_000, 100_000, 128_000, 199_999, 200_000, 256_000, 272_000, 512_000, 524_288)
# A call served in fast mode (Anthropic's ``speed: "fast"``) is billed at a premium: its class is
# its prompt's class plus FAST_CLASSES, so that the projection keeps it apart from standard calls
# of the same prompt size without a column of its own (its key is what picks a price besides the
# model and the time).
FAST_CLASSES = 100
FAST = "fast"


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


TELEMETRY = "telemetry"
TRANSCRIPT = "transcript"  # any usage that is not telemetry: transcripts, hooks, toka's own clients


def usage_origin(payload: dict[str, Any]) -> str:
    return TELEMETRY if payload.get("origin") == TELEMETRY else TRANSCRIPT


class RequestNames(NamedTuple):
    """How a usage event's request is matched against the claims before it (``asks``, in order)
    and the names it claims for whoever reported the request first (``claims``)."""

    asks: tuple[str, ...]
    claims: tuple[str, ...]

    def every(self) -> set[str]:
        """The names whose stored claims decide the event: what a backend reads for it."""
        return {*self.asks, *self.claims}


NO_NAMES = RequestNames((), ())


def usage_names(payload: dict[str, Any]) -> RequestNames:
    """The names of the request a usage event counts, alike from every source that reports it;
    none when the request cannot be told (such an event always counts)."""
    if "cached_input_tokens" in payload:  # OpenAI's counts
        if payload.get("revision") is True:
            return NO_NAMES
        # Codex's rollout and its telemetry name no response: the call's four counts do.
        counts = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")
        name = "openai:" + ":".join(str(_count(payload, count)) for count in counts)
        return RequestNames((name,), (name,))
    found = payload.get("request_id")
    request = found if isinstance(found, str) else ""
    prompt = usage_counts(payload).prompt  # a revision's context_tokens: its response's prompt
    model = payload.get("model")
    if not (prompt and isinstance(model, str) and model):
        return RequestNames((request,), (request,)) if request else NO_NAMES
    sized = f"anthropic:{model}:{prompt}"  # claimed by reports without an id
    sized_named = sized + ":named"  # by reports with one
    if request:
        return RequestNames((request, sized), (request, sized_named))
    return RequestNames((sized, sized_named), (sized,))


class Claims:
    """Which source reported each request first: :meth:`counts` says whether a usage event
    counts, given the events before it (fed in log order). ``held`` may start with the claims a
    backend stored; :attr:`new` lists those made since, as (session, name, origin)."""

    def __init__(self, held: dict[tuple[str, str], str] | None = None) -> None:
        self.held: dict[tuple[str, str], str] = {} if held is None else held
        self.new: list[tuple[str, str, str]] = []

    def counts(self, session: str, payload: dict[str, Any]) -> bool:
        asks, claims = usage_names(payload)
        if not asks:
            return True
        origin = usage_origin(payload)
        holder = next((self.held[(session, n)] for n in asks if (session, n) in self.held), origin)
        for name in claims:  # the request's names go to the source that reported it first
            if (session, name) not in self.held:
                self.held[(session, name)] = holder
                self.new.append((session, name, holder))
        return holder == origin


def usage_speed(payload: dict[str, Any]) -> str | None:
    """``fast`` for a call the agent says was served in fast mode (Claude Code's transcript
    ``usage.speed``, its telemetry's ``speed``); None for every other call."""
    return FAST if payload.get("speed") == FAST else None


def prompt_class(prompt: int, speed: str | None = None) -> int:
    """The class of a call's whole prompt: how many of PROMPT_CLASSES it is above, plus
    FAST_CLASSES for a fast-mode call."""
    return bisect_left(PROMPT_CLASSES, prompt) + (FAST_CLASSES if speed == FAST else 0)


def class_prompt(index: int) -> int:
    """A prompt size of class ``index``: the smallest above its lower bound."""
    index %= FAST_CLASSES
    return 0 if index == 0 else PROMPT_CLASSES[index - 1] + 1


def class_speed(index: int) -> str | None:
    """The speed the calls of class ``index`` were served at: ``fast``, or None (standard)."""
    return FAST if index >= FAST_CLASSES else None


# Usage is kept per quarter of an hour: every time zone's midnight (their offsets are whole
# quarters of an hour), every hour a 5-hour billing block starts at, and every hour a price
# changes at fall on a bucket's edge, so days, blocks and prices read from buckets are exact.
BUCKET_US = 15 * 60 * 1_000_000


@dataclass(frozen=True, slots=True)
class UsageRow:
    """The usage of one session's agent on one model in one bucket, for calls of one prompt
    class: a row of the usage projection. ``first_ts`` and ``last_ts`` bound its events (UTC
    microseconds), so gaps between calls are known to the microsecond."""

    bucket: int
    session: str
    agent: str  # "" for events without one
    model: str  # "" when the usage names none
    prompt_class: int
    calls: int
    input_tokens: int
    output_tokens: int
    cache_creation_tokens: int
    cache_creation_1h_tokens: int
    cache_read_tokens: int
    first_ts: int
    last_ts: int
    telemetry_calls: int = 0  # of ``calls``, those reported by telemetry (the rest: transcripts, clients)

    @property
    def key(self) -> tuple[int, str, str, str, int]:
        return (self.bucket, self.session, self.agent, self.model, self.prompt_class)

    def merged(self, other: UsageRow) -> UsageRow:
        """This row and another of the same key, added up."""
        return UsageRow(
            *self.key,
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_tokens + other.cache_creation_tokens,
            self.cache_creation_1h_tokens + other.cache_creation_1h_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            min(self.first_ts, other.first_ts),
            max(self.last_ts, other.last_ts),
            self.telemetry_calls + other.telemetry_calls,
        )


def usage_row(ts: int, session: str, agent: str | None, payload: dict[str, Any]) -> UsageRow:
    """The row one usage event adds."""
    counts = usage_counts(payload)
    model = payload.get("model")
    return UsageRow(
        ts - ts % BUCKET_US,
        session,
        agent or "",
        model if isinstance(model, str) else "",
        prompt_class(counts.prompt, usage_speed(payload)),
        counts.calls,
        counts.input,
        counts.output,
        counts.cache_creation,
        counts.cache_creation_1h,
        counts.cache_read,
        ts,
        ts,
        counts.calls if usage_origin(payload) == TELEMETRY else 0,
    )


# A usage event as the backends hand it over: its time, session, agent and payload.
UsageEvent = tuple[int, str, str | None, dict[str, Any]]


def claimed_names(usage: Iterable[UsageEvent]) -> list[tuple[str, str]]:
    """The (session, name) pairs whose stored claims decide a batch of usage events: what a
    backend reads from its ``usage_requests`` before :func:`counted_rows`."""
    return [(session, name) for _, session, _, payload in usage for name in usage_names(payload).every()]


def counted_rows(
    usage: Iterable[UsageEvent], held: dict[tuple[str, str], str]
) -> tuple[list[UsageRow], list[tuple[str, str, str]]]:
    """The rows of the usage events that count, given the claims stored for their names
    (``held``), and the claims the batch makes, as (session, name, origin), for the backend to
    store."""
    claims = Claims(held)
    rows = [
        usage_row(ts, session, agent, payload)
        for ts, session, agent, payload in usage
        if claims.counts(session, payload)
    ]
    return rows, claims.new


def fold_usage(rows: Iterable[UsageRow]) -> list[UsageRow]:
    """Rows of the same key added up into one, in the order their keys first came."""
    folded: dict[tuple[int, str, str, str, int], UsageRow] = {}
    for row in rows:
        held = folded.get(row.key)
        folded[row.key] = row if held is None else held.merged(row)
    return list(folded.values())


DAY_US = 86_400 * 1_000_000


def sum_usage(rows: Iterable[UsageRow], width: int, offset: int = 0, sessions: bool = False) -> list[UsageRow]:
    """``rows`` summed per period of ``width`` microseconds (periods start where ``bucket +
    offset`` is a multiple of ``width``: with a day's width and a zone's offset from UTC, the
    zone's days), UTC day, model and prompt class, and per session and agent when ``sessions``
    (else both ""): what ``EventStore.usage_sums`` gives. A sum's ``bucket`` is its earliest
    bucket, which lies in its period and in its UTC day both."""
    summed: dict[tuple[int, int, str, str, str, int], UsageRow] = {}
    for row in rows:
        session, agent = (row.session, row.agent) if sessions else ("", "")
        key = ((row.bucket + offset) // width, row.bucket // DAY_US, session, agent, row.model, row.prompt_class)
        held = summed.get(key)
        own = replace(row, session=session, agent=agent)
        summed[key] = own if held is None else replace(held.merged(own), bucket=min(held.bucket, row.bucket))
    return list(summed.values())
