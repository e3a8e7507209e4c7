"""The results of the daemon's ops, as declared types: the shapes of docs/json.md.

The daemon answers with plain JSON; these TypedDicts say what it sends and what a reader may rely
on, so that the handlers that build a ``Session`` (daemon/log/ops.py), `toka show` and the
dashboard's session title all use the same one and mypy holds each to it. They describe, they do
not check (the hook, which reads a field or two, does not import this); tests/cli/test_results.py
keeps them equal to what a real daemon sends, tests/cli/test_json_doc.py to what docs/json.md
documents. No `from __future__ import annotations`: TypedDict reads NotRequired from the
evaluated annotations.
"""

from typing import Any, NotRequired, TypedDict

# What `toka export otel` sends and the forwarder's status, `toka status` and its parts, likewise.
from daemon.contract.results_cost import Counts
from daemon.contract.results_otel import ExportStatus as ExportStatus
from daemon.contract.results_otel import OtelExport as OtelExport
from daemon.contract.results_status import AgentAtRisk as AgentAtRisk
from daemon.contract.results_status import ConnectionState as ConnectionState
from daemon.contract.results_status import HeadsStatus as HeadsStatus
from daemon.contract.results_status import OtelStatus as OtelStatus
from daemon.contract.results_status import Status as Status
from daemon.contract.results_status import WatchFolder as WatchFolder
from daemon.contract.results_status import WatchHistory as WatchHistory
from daemon.contract.results_status import WatchStatus as WatchStatus

# The results of the log's upkeep (verify, import, copy, doctor's facts) live in a module of their
# own; they are read from here as the others are.
from daemon.contract.results_upkeep import BadLine as BadLine
from daemon.contract.results_upkeep import CopyReport as CopyReport
from daemon.contract.results_upkeep import Damage as Damage
from daemon.contract.results_upkeep import DatabaseCheck as DatabaseCheck
from daemon.contract.results_upkeep import DatabaseHealth as DatabaseHealth
from daemon.contract.results_upkeep import ImportReport as ImportReport
from daemon.contract.results_upkeep import MissingRights as MissingRights
from daemon.contract.results_upkeep import PostgresHealth as PostgresHealth
from daemon.contract.results_upkeep import Recovery as Recovery
from daemon.contract.results_upkeep import RecoveryLost as RecoveryLost
from daemon.contract.results_upkeep import Tip as Tip
from daemon.contract.results_upkeep import VerifyProblem as VerifyProblem
from daemon.contract.results_upkeep import VerifyReport as VerifyReport

# What a search snippet wraps each matched run of words in (docs/search.md). The store writes
# them (store.search, which cannot import this layer); a test keeps the two equal.
MARK_START, MARK_END = "«", "»"


class EventHeader(TypedDict):
    """What names an event and says what it is; search hits carry it too."""

    seq: int
    id: str
    session: str
    agent: str | None
    kind: str
    ts: str
    digest: str


class Event(EventHeader):
    parents: list[str]
    key: str | None
    payload: dict[str, Any]


class EventsPage(TypedDict):
    """``events.query``: a page of events; ``more`` when a full page came back."""

    session: str | None
    events: list[Event]
    more: bool


class Session(TypedDict):
    session: str
    events: int
    first_seq: int
    last_seq: int
    first_ts: str
    last_ts: str
    head: str
    agents: dict[str, int]
    kinds: dict[str, int]
    source: str | None
    project: str | None
    model: str | None
    context_tokens: int | None
    context_window: int | None
    fill_pct: float | None
    usage: Counts  # its tokens and cost, as `toka report session` counts them


class SessionList(TypedDict):
    sessions: list[Session]


class Thresholds(TypedDict):
    warning_pct: float
    critical_pct: float
    compress_pct: float


class AgentRecord(TypedDict):
    """An agent as its lifecycle keeps it (`toka handoff chain` lists these)."""

    id: str
    session: str
    name: str
    spawned: bool
    type: str | None
    role: str | None
    version: int | None
    trace: str | None
    model: str | None
    state: str
    reason: str | None
    detail: str | None
    policy: str | None
    auto_compress: str | None
    predecessor: str | None
    successor: str | None


# One lifecycle event of an agent: its payload with its seq, id and time ("from" is a keyword,
# hence this form); the figures are there when its usage was known, "cause" when an event moved it.
AgentChange = TypedDict(
    "AgentChange",
    {
        "seq": int,
        "id": str,
        "ts": str,
        "agent": str,
        "from": str,
        "to": str,
        "reason": str | None,
        "detail": str | None,
        "cause": NotRequired[str],
        "context_tokens": NotRequired[int],
        "context_window": NotRequired[int],
        "fill_pct": NotRequired[float | None],
        "compressed_tokens": NotRequired[int],
        "last_active": NotRequired[str],
    },
)


class Agent(AgentRecord):
    """`toka agent show` (``history`` only there) and each of `toka agent list`."""

    context_tokens: int | None
    context_window: int
    window_source: str
    fill_pct: float | None
    compressed_tokens: int | None  # toka's compressed context (its latest compression), not the fill
    compressed_ts: str | None
    live: bool  # still runs: not ENDED, TERMINATED or HANDOFF_COMPLETE
    last_active: str | None  # its latest activity of its own (toka's appends are not)
    thresholds: Thresholds
    handoffs_in_trace: int
    history: NotRequired[list[AgentChange]]


class AgentList(TypedDict):
    agents: list[Agent]


class TokensUntil(TypedDict):
    warning: int | None
    critical: int | None
    compression: int | None


class Usage(TypedDict):
    """The headroom document: `toka usage SESSION|AGENT`, of the agent named (a session: its main agent)."""

    session: str
    agent: str
    model: str | None
    context_tokens: int | None
    context_window: int
    window_source: str
    fill_pct: float | None
    headroom_tokens: int | None
    thresholds: Thresholds
    tokens_until: TokensUntil
    input_tokens: int
    output_tokens: int
    cache_creation_tokens: int
    cache_read_tokens: int
    calls: int
    per_call: dict[str, dict[str, float]]
    last_usage_ts: str | None
    compressed_tokens: int | None
    compressed_ts: str | None
    state: str | None


class HandoffSummary(TypedDict):
    """A stored handoff as `toka handoff list` shows it."""

    id: str
    seq: int
    ts: str
    session: str
    trace: str | None
    predecessor: str | None
    successor: str | None
    reason: str | None
    fill_pct: float | None
    progress: dict[str, Any]
    active: bool


class Handoff(HandoffSummary):
    """`toka handoff show|create`: the summary with the document and its two renderings."""

    document: dict[str, Any]
    markdown: str
    prompt: str


class HandoffList(TypedDict):
    handoffs: list[HandoffSummary]


class HandoffChain(TypedDict):
    trace: str
    agents: list[AgentRecord]
    handoffs: list[HandoffSummary]


class HandoffCheck(TypedDict):
    """`toka handoff verify`."""

    id: str
    ok: bool
    digest: str
    rebuilt: str
    problems: list[str]


class Stats(TypedDict):
    events: int
    sessions: int
    blobs: int
    payload_bytes: int
    blob_bytes: int
    stored_bytes: int
    disk_bytes: int
    dedup_ratio: float


class Compression(TypedDict):
    """`toka compress`: the ``compression`` event's payload with what the daemon adds."""

    stored: bool
    id: str | None
    seq: int | None
    format: int
    policy: str
    first_seq: int | None
    last_seq: int | None
    first_event: str | None
    last_event: str | None
    events_in_range: int
    summary: str
    kept_seqs: list[int]
    summarizer: dict[str, Any] | None
    elided: list[dict[str, Any]]
    target_tokens: int
    tokens_before: int
    tokens_after: int
    summary_tokens: int
    tokens_saved: int
    ratio: float
    agent: str
    target_pct: float
    window: int
    trigger: str
    estimator: str


class ContextMessage(TypedDict):
    role: str
    content: str


class ContextRedaction(TypedDict):
    raw: bool  # true with --raw: nothing redacted
    kinds: list[str]  # the kinds redacted (redaction.kinds); empty when raw
    counts: dict[str, int]  # kind -> values replaced in the messages, kinds found only


class WorkingContext(TypedDict):
    """`toka context --format json`: the context an agent should see, fitted to a budget."""

    session: str
    agent: str
    budget: int
    policy: str
    estimator: str
    allocation: dict[str, int]
    parts: dict[str, dict[str, int]]
    tokens: int
    compressions: list[str]
    fitted_by: dict[str, Any] | None
    included: list[dict[str, Any]]
    left_out: list[dict[str, Any]]
    messages: list[ContextMessage]
    redaction: ContextRedaction


class MemoryEntry(TypedDict):
    scope: str
    key: str
    value: Any
    version: int
    pinned: bool
    set_ts: str
    expires_ts: str | None
    seq: int


class MemoryList(TypedDict):
    entries: list[MemoryEntry]


class PoolStats(TypedDict):
    capacity_bytes: int
    used_bytes: int
    free_bytes: int
    fill_pct: float
    level: str
    thresholds: dict[str, float]
    high_water_bytes: int
    entries: int
    puts: dict[str, int]
    gets: dict[str, int]
    deletes: int
    evictions: dict[str, int]
    size_histogram: dict[str, int]
    sweeper: dict[str, Any]


class SearchHit(EventHeader):
    """One match, best first; ``snippet`` holds the matched words between MARK_START and MARK_END.
    ``matched``: why it is a hit, ``words``, ``meaning`` or ``both`` (None: a recall item there for
    being recent or a summary); ``similarity``: the cosine of its vector with the query's, when the
    meaning found it (docs/recall.md)."""

    score: float | None
    snippet: str
    matched: str | None
    similarity: float | None


class SearchResult(TypedDict):
    hits: list[SearchHit]


class RecallItem(SearchHit):
    why: str


class Recall(TypedDict):
    query: str
    session: str
    items: list[RecallItem]


class RecallStatus(TypedDict):
    """``recall.status``: semantic recall as the daemon runs it (docs/recall.md)."""

    semantic: bool  # recall.semantic
    model: str  # recall.embedding_model
    method: str | None  # how neighbours are found: sqlite-vec, numpy or pgvector; None: no index
    embedded: int | None  # vectors stored
    through_seq: int | None  # the last seq the embedder has read past
    behind: int | None  # events of the embedded kinds not read yet
    problem: str | None  # why it cannot run, when it is on
    problem_in: str | None  # "model": the model does not load; "index": the backend keeps no vectors (no pgvector)
    hint: str | None


class HookAnswer(TypedDict):
    """``hooks.answer``: the hook's event as appended, and what the agent is to be given (null:
    nothing; docs/injection.md)."""

    seq: int
    id: str
    created: bool
    context: str | None


class Noted(TypedDict):
    """`toka note`: the note's event, of the agent whose next handoff lists it."""

    session: str
    agent: str
    kind: str  # note.<kind>, or error
    seq: int
    id: str
    created: bool
