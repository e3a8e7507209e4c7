"""The compression policies: which prefix of a session's events to compress, and what replaces it.

Every policy works the same way on the events it is given (a session's events after its last
compressed range, in log order): the events after a cut are kept verbatim, the prefix before it is
the compressed range, and something short replaces the range. Sizes come from the caller's
estimator, called once per event; the summary is measured as a user ``message`` event holding its
text, so it is counted the way the context will hold it. When every event already fits the target
the result is an empty range with ratio 1.0, whatever the policy.

- ``fifo``: drop the oldest events, one by one, until the rest and a one-line note of what was
  dropped fit the target.
- ``window``: the newest events that fit the target with the note, starting at a message (a turn
  boundary) so the context does not open in the middle of a tool exchange.
- ``summarize``: the newest events that fit the target less the summary budget
  (:data:`SUMMARY_SHARE` of the target) are kept; the range is replaced by a summary within that
  budget.
- ``importance``: the newest ``keep_last`` messages and what followed them are kept (within half
  of what the summary leaves), the range is summarized as for ``summarize``, and the remaining
  budget keeps the range's highest-scoring events verbatim (:data:`SCORES`), newer first among
  equals, in log order again.

No cut falls between a tool call and its result: a result whose call is compressed is compressed
too. ``tokens_after`` is within the target whenever the target can hold the one-line note.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from daemon.compress.external import ExternalFailure, run_external
from daemon.compress.model import Compression, Elided, SummarizerUsed
from daemon.compress.quote import BlobCitations, call_id, failed, span
from daemon.compress.summary import clip_to, extractive_summary
from daemon.compress.transcript import transcript
from daemon.contract.kinds import Kind
from daemon.contract.policies import CompressionPolicy
from daemon.handoff import Request
from daemon.transcript.calls import PATH_FIELDS, TODO_TOOLS
from daemon.transcript.text import is_request
from store.errors import UsageError
from store.events import Event

# The summary's share of the target (summarize and importance): a quarter leaves most of the
# context to the events themselves, and a quarter of a typical target holds the request, the
# to-dos, the files and the errors of a long session with room to spare.
SUMMARY_SHARE = 0.25
# importance: the newest messages (each with the calls and results that follow it) kept whatever
# their score, and the share of the non-summary budget they may take at most.
KEEP_LAST = 3
KEEP_LAST_SHARE = 0.5
# importance: what is worth keeping verbatim. 0 is never kept (usage figures, raw records and
# metadata mean nothing to a model reading the context).
SCORES = {
    "request": 100,  # a user's request
    "note.decision": 90,
    "todo": 85,  # TodoWrite / update_plan calls, note.todo
    "error": 80,  # failed tool results, error events, and the calls that failed
    "note": 70,  # rejected alternatives, constraints, assumptions, dependencies
    "file_change": 60,  # Write, Edit, MultiEdit, NotebookEdit, apply_patch
    "compaction": 50,  # an agent harness's own summary of earlier context
    "assistant": 40,  # the agent's messages
    "file_change_result": 30,
    "tool_call": 20,
    "tool_result": 10,
    "injected": 5,  # user messages the harness injected
    "thinking": 3,
    "long_tool_result": 2,  # a successful result whose output exceeds LONG_OUTPUT_CHARS
}
LONG_OUTPUT_CHARS = 2000
_NOTE_SCORES: dict[str, int] = {
    Kind.NOTE_DECISION: SCORES["note.decision"],
    Kind.NOTE_TODO: SCORES["todo"],
    Kind.NOTE_REJECTED: SCORES["note"],
    Kind.NOTE_CONSTRAINT: SCORES["note"],
    Kind.NOTE_ASSUMPTION: SCORES["note"],
    Kind.NOTE_DEPENDENCY: SCORES["note"],
}
_FILE_TOOLS = frozenset({*PATH_FIELDS, "apply_patch"})

Tokens = Callable[[Event], int]
Redact = Callable[[str], str]


def identity(text: str) -> str:
    """The default ``redact``: text as it is."""
    return text


def summary_event(text: str, session: str) -> Event:
    """The summary as the context holds it, for the token estimator: a user message."""
    return Event(0, "", session, None, "message", 0, (), "", None, {"role": "user", "text": text})


@dataclass(frozen=True, slots=True)
class _Job:
    policy: str
    events: Sequence[Event]
    sizes: list[int]
    after: list[int]  # after[i]: tokens of events[i:]; after[len(events)] == 0
    target: int
    tokens: Tokens
    redact: Redact
    summarizer: str | None
    timeout_s: float
    keep_last: int
    original_request: Request | None

    def measure(self, text: str) -> int:
        return self.tokens(summary_event(text, self.events[0].session)) if text else 0

    def result(
        self,
        cut: int,
        summary: str,
        summary_tokens: int,
        kept: Sequence[int] = (),
        summarizer: SummarizerUsed | None = None,
        elided: tuple[Elided, ...] = (),
    ) -> Compression:
        first, last = (self.events[0], self.events[cut - 1]) if cut else (None, None)
        return Compression(
            policy=self.policy,
            first_seq=None if first is None else first.seq,
            last_seq=None if last is None else last.seq,
            first_event=None if first is None else first.id,
            last_event=None if last is None else last.id,
            events_in_range=cut,
            summary=summary,
            kept_seqs=tuple(self.events[i].seq for i in kept),
            summarizer=summarizer,
            elided=elided,
            target_tokens=self.target,
            tokens_before=self.after[0],
            tokens_after=summary_tokens + sum(self.sizes[i] for i in kept) + self.after[cut],
            summary_tokens=summary_tokens,
        )


def _cut(after: list[int], budget: int) -> int:
    """The first index from which the events fit ``budget`` (len(events) when none does)."""
    cut = len(after) - 1
    while cut > 0 and after[cut - 1] <= budget:
        cut -= 1
    return cut


def _past_orphans(events: Sequence[Event], cut: int) -> int:
    """``cut`` moved past the tool results whose calls lie before it."""
    calls = {call_id(e.payload) for e in events[cut:] if e.kind == Kind.TOOL_CALL}
    while cut < len(events) and events[cut].kind == Kind.TOOL_RESULT and call_id(events[cut].payload) not in calls:
        cut += 1
    return cut


def _dropped_note(events: Sequence[Event], cut: int) -> str:
    counts = Counter(e.kind for e in events[:cut])
    parts = [
        f"{counts.pop(kind)} {label}"
        for kind, label in (
            (Kind.MESSAGE, "messages"),
            (Kind.TOOL_CALL, "tool calls"),
            (Kind.TOOL_RESULT, "tool results"),
        )
        if counts.get(kind)
    ]
    other = sum(counts.values())
    if other:
        parts.append(f"{other} other")
    first, last = events[0], events[cut - 1]
    resumes = f"; the context resumes at seq {events[cut].seq}" if cut < len(events) else ""
    return f"Dropped {cut} events, seq {first.seq}–{last.seq} ({span(events[:cut])}): {', '.join(parts)}{resumes}."


def _with_note(job: _Job, cut: int, snap: Callable[[int], int]) -> Compression:
    """The smallest cut from ``cut`` on (moved by ``snap``) at which the rest and the note fit."""
    n = len(job.events)
    while True:
        cut = snap(cut)
        note = job.redact(_dropped_note(job.events, cut)) if cut else ""
        used = job.measure(note)
        if cut >= n or job.after[cut] + used <= job.target or used > job.target:
            return job.result(cut, note, used)
        cut += 1


def _fifo(job: _Job) -> Compression:
    return _with_note(job, _cut(job.after, job.target), lambda cut: _past_orphans(job.events, cut))


def _window(job: _Job) -> Compression:
    events = job.events

    def at_message(cut: int) -> int:
        for i in range(cut, len(events)):
            event = events[i]
            if event.kind == Kind.MESSAGE and event.payload.get("meta") is not True:
                return i
        return _past_orphans(events, cut)

    return _with_note(job, _cut(job.after, job.target), at_message)


def _summarize_range(job: _Job, cut: int, budget: int) -> tuple[str, int, SummarizerUsed, tuple[Elided, ...]]:
    """The summary of ``events[:cut]`` within ``budget``: the external summarizer's when one is
    configured and succeeds, else the extractive one."""
    covered = job.events[:cut]

    def extractive(used: SummarizerUsed) -> tuple[str, int, SummarizerUsed, tuple[Elided, ...]]:
        summary = extractive_summary(
            covered,
            budget=budget,
            measure=job.measure,
            redact=job.redact,
            original_request=job.original_request,
        )
        return summary.text, job.measure(summary.text), used, summary.elided

    if job.summarizer is None:
        return extractive(SummarizerUsed("extractive"))
    command = job.redact(job.summarizer)
    blobs = BlobCitations()
    source = job.redact(transcript(covered, blobs))
    try:
        output = run_external(job.summarizer, source, job.timeout_s)
    except ExternalFailure as failure:
        return extractive(SummarizerUsed("extractive", command, job.redact(failure.reason)))
    text = job.redact(output)
    fitted = clip_to(text, budget, job.measure)
    used = SummarizerUsed("external", command, None, fitted != text)
    return fitted, job.measure(fitted), used, blobs.present_in(fitted)


def _summarize(job: _Job) -> Compression:
    budget = int(job.target * SUMMARY_SHARE)
    cut = _past_orphans(job.events, _cut(job.after, job.target - budget))
    text, used, summarizer, elided = _summarize_range(job, cut, budget)
    return job.result(cut, text, used, (), summarizer, elided)


def scores(events: Sequence[Event]) -> list[int]:
    """The importance of each event (:data:`SCORES`): requests, decisions, to-dos, errors and file
    changes above the agent's chatter, and long successful tool output lowest of the tool events."""
    failed_calls = {call_id(e.payload) for e in events if e.kind == Kind.TOOL_RESULT and failed(e.payload)}
    file_calls = {
        call_id(e.payload) for e in events if e.kind == Kind.TOOL_CALL and e.payload.get("tool") in _FILE_TOOLS
    }
    found: list[int] = []
    for event in events:
        payload: dict[str, Any] = event.payload
        kind = event.kind
        if kind == Kind.MESSAGE:
            role = payload.get("role")
            if role == "user":
                score = SCORES["request"] if is_request(event) else SCORES["injected"]
            else:
                score = SCORES["assistant"] if role == "assistant" else SCORES["injected"]
        elif kind == Kind.TOOL_CALL:
            tool = payload.get("tool")
            if tool in TODO_TOOLS:
                score = SCORES["todo"]
            elif call_id(payload) in failed_calls:
                score = SCORES["error"] - 1  # just below its result, so the two tend to stay together
            elif tool in _FILE_TOOLS:
                score = SCORES["file_change"]
            else:
                score = SCORES["tool_call"]
        elif kind == Kind.TOOL_RESULT:
            if failed(payload):
                score = SCORES["error"]
            elif call_id(payload) in file_calls:
                score = SCORES["file_change_result"]
            else:
                output = payload.get("output")
                long = isinstance(output, str) and len(output) > LONG_OUTPUT_CHARS
                score = SCORES["long_tool_result"] if long else SCORES["tool_result"]
        elif kind in _NOTE_SCORES:
            score = _NOTE_SCORES[kind]
        elif kind == Kind.ERROR:
            score = SCORES["error"]
        elif kind in (Kind.COMPACTION, Kind.COMPACTION_SUMMARY):
            score = SCORES["compaction"]
        elif kind == Kind.THINKING:
            score = SCORES["thinking"]
        else:
            score = 0
        found.append(score)
    return found


def _newest_messages_start(events: Sequence[Event], count: int) -> int:
    """The index of the ``count``-th newest message (0 when there are fewer; len when count is 0)."""
    if count <= 0:
        return len(events)
    seen = 0
    for i in range(len(events) - 1, -1, -1):
        event = events[i]
        if event.kind == Kind.MESSAGE and event.payload.get("meta") is not True:
            seen += 1
            if seen == count:
                return i
    return 0


def _importance(job: _Job) -> Compression:
    budget = int(job.target * SUMMARY_SHARE)
    rest = job.target - budget
    events = job.events
    cut = max(_newest_messages_start(events, job.keep_last), _cut(job.after, int(rest * KEEP_LAST_SHARE)))
    cut = _past_orphans(events, cut)
    room = rest - job.after[cut]
    ranked = scores(events[:cut])
    kept: list[int] = []
    for i in sorted(range(cut), key=lambda i: (-ranked[i], -i)):
        if ranked[i] <= 0:
            break
        if job.sizes[i] <= room:
            kept.append(i)
            room -= job.sizes[i]
    kept.sort()
    text, used, summarizer, elided = _summarize_range(job, cut, budget)
    return job.result(cut, text, used, kept, summarizer, elided)


_POLICY_RUNS: dict[str, Callable[[_Job], Compression]] = {
    CompressionPolicy.FIFO: _fifo,
    CompressionPolicy.WINDOW: _window,
    CompressionPolicy.SUMMARIZE: _summarize,
    CompressionPolicy.IMPORTANCE: _importance,
}


def compress(
    events: Sequence[Event],
    *,
    policy: str,
    target_tokens: int,
    tokens: Tokens,
    redact: Redact = identity,
    summarizer: str | None = None,
    timeout_s: float = 30.0,
    keep_last: int = KEEP_LAST,
    original_request: Request | None = None,
) -> Compression:
    """Compress ``events`` (one session's events after its last compressed range, in log order)
    to ``target_tokens`` with ``policy``.

    ``tokens`` estimates one event's size in a context; ``redact`` is applied to every text that
    leaves the process (the external summarizer's input) and to the summary; ``summarizer`` is an
    external command line (summarize and importance only; the built-in extractive summarizer
    without it or when it fails); ``timeout_s`` bounds it; ``keep_last`` is the number of newest
    messages importance keeps whatever their score; ``original_request`` is the trace's first
    request when it lies before ``events`` (see :func:`daemon.handoff.first_request`).
    Pure apart from running the external command: the same events give the same result.
    """
    if policy not in _POLICY_RUNS:
        raise UsageError(f"unknown compression policy {policy!r}", f"use one of: {', '.join(CompressionPolicy)}")
    if target_tokens < 0:
        raise UsageError(f"target_tokens must not be negative, not {target_tokens}")
    if keep_last < 0:
        raise UsageError(f"keep_last must not be negative, not {keep_last}")
    sizes = [tokens(e) for e in events]
    after = [0] * (len(sizes) + 1)
    for i in range(len(sizes) - 1, -1, -1):
        after[i] = after[i + 1] + sizes[i]
    job = _Job(
        policy,
        events,
        sizes,
        after,
        target_tokens,
        tokens,
        redact,
        summarizer,
        timeout_s,
        keep_last,
        original_request,
    )
    if after[0] <= target_tokens:
        return job.result(0, "", 0)
    return _POLICY_RUNS[policy](job)
