"""What `toka status` reads (docs/json.md, "toka status --json"), as declared types: the daemon
and the parts of the log it reports on. Read through results.py as the other results are. No
`from __future__ import annotations`: TypedDict reads NotRequired from the evaluated annotations."""

from typing import NotRequired, TypedDict

from daemon.contract.results_otel import ExportStatus
from daemon.contract.results_upkeep import Damage


class WatchFolder(TypedDict):
    """An agent's own transcript folder, followed while watch.agents is on (docs/json.md)."""

    agent: str  # claude-code or codex
    path: str
    found: bool  # it exists, and is followed (a folder made later is found at a rescan)
    files: int  # its files read since the daemon started


class WatchHistory(TypedDict):
    """The daemon's read at start of what its followed files held (op watch.ready): in a new
    home the agents' whole history, afterwards what the files gained while it was down."""

    state: str  # reading, or done
    first: bool  # this read is the home's first import of the agents' folders
    files: int  # found when the read began
    files_read: int
    events: int  # added to the log by this read
    imported_at: str | None  # when the agents' history was first imported; null until then


class WatchStatus(TypedDict):
    paths: list[str]  # watch.paths
    missing: list[str]
    agents: list[WatchFolder] | None  # null when watch.agents is off
    files: int
    events: int
    bad_lines: int
    last_error: str | None
    history: WatchHistory


class AgentAtRisk(TypedDict):
    id: str
    state: str
    fill_pct: float | None
    detail: str | None


class ConnectionState(TypedDict):
    """A database behind a connection (PostgreSQL): whether it answered the last attempt."""

    reachable: bool
    error: str | None
    since: float
    outages: int


class OtelStatus(TypedDict):
    """The OpenTelemetry receiver (docs/otel.md): where it listens and what it received."""

    listen: str | None  # null when it could not start (see error)
    error: str | None
    requests: NotRequired[int]
    refused: NotRequired[int]
    log_records: NotRequired[int]
    metric_points: NotRequired[int]
    spans: NotRequired[int]
    events: NotRequired[int]
    rejected: NotRequired[int]
    ignored: NotRequired[int]


class HeadsStatus(TypedDict):
    """The signed tree heads (docs/tamper-evidence.md): the latest, and the witness's failures."""

    size: int | None  # events the latest head covers; null before the first
    signed_at: str | None
    file: str
    witness_failures: int
    refused: str | None  # why the daemon will not sign the log as it is; null when it signs
    untrusted: int  # lines at the end of the heads file that are not heads signed by this key


class SkippedEvent(TypedDict):
    seq: int
    id: str
    kind: str
    projection: str  # agents, states, dependencies or memory
    reason: str


class ProjectionsStatus(TypedDict):
    skipped: int  # events the projections could not apply since the daemon started
    recent: list[SkippedEvent]  # the last ten of them


class Status(TypedDict):
    version: str
    protocol: int
    pid: int
    uptime_s: float
    database: str
    durability: str
    socket: str
    events: int
    sessions: int
    clients: int
    buffered_bytes: int  # of unfinished request lines, against daemon.max_buffered_bytes
    subscribers: int
    commits: int
    watch: WatchStatus | None
    connection: ConnectionState | None
    damaged: Damage | None  # the database was found damaged: it takes no writes
    projections: ProjectionsStatus
    agents_at_risk: list[AgentAtRisk]
    otel: OtelStatus | None  # null unless otel.listen is set
    heads: HeadsStatus | None  # null when no heads are signed
    export: ExportStatus | None  # null unless export.otlp.endpoint is set
