"""The results of the OpenTelemetry export, as declared types (the shapes of docs/json.md): the
forwarder's part of ``status``, and what `toka export otel` sent.

Read through daemon/contract/results.py, which gathers every result type. No `from __future__
import annotations`: TypedDict reads NotRequired from the evaluated annotations.
"""

from typing import TypedDict


class ExportStatus(TypedDict):
    """The forwarder to a collector (docs/otel.md, "Export"): where it sends and how far it is."""

    endpoint: str
    protocol: str
    include_content: bool
    state: str  # idle, sending, retrying, error
    cursor: int  # the last seq whose spans the collector took
    behind: int  # events committed after the cursor
    queued: int
    open_sessions: int
    sent_spans: int
    dropped_spans: int
    overflowed_events: int
    requests: int
    retries: int
    last_sent: str | None
    last_error: str | None
    error: str | None  # why it does not run at all


class ExportUsage(TypedDict):
    input_tokens: int
    output_tokens: int
    cache_creation_tokens: int
    cache_read_tokens: int
    cost_usd: float


class OtelExport(TypedDict):
    """What `toka export otel` sent."""

    endpoint: str
    include_content: bool
    sessions: int
    spans: int
    requests: int
    tool_calls: int
    agents: int
    span_events: int
    skipped_requests: int
    dropped: int
    posts: int
    bytes: int
    retries: int
    usage: ExportUsage
