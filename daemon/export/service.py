"""``toka export otel``: sessions of the log sent once to a collector as OpenTelemetry traces.

The export reads each session whole, in log order, and sends its request and tool-call spans as
it goes, then its agent spans, in requests of ``export.otlp.batch_spans``; with ``since`` or
``until`` only the requests, tool calls and agent activity inside that time are sent (a
session's events before it are still read, so a request is counted as the report counts it).
Exporting again sends the same spans with the same ids. A collector that cannot be reached is
tried a few times (daemon/export/collector.py), then the export stops with ``ExportFailed``,
saying how much was sent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from daemon.agents.refs import Refs
from daemon.component import Component
from daemon.core import Core
from daemon.cost.service import Costs
from daemon.cost.tally import usd
from daemon.export.agents import AgentSpans
from daemon.export.calls import CallSpans
from daemon.export.content import content_of
from daemon.export.settings import OtlpExportSettings
from daemon.export.spans import Span
from daemon.export.target import ENDPOINT_EXAMPLE, HEADERS_EXAMPLE, header_table, traces_url
from daemon.otel.extra import INSTALL, missing
from daemon.redact.settings import RedactionSettings
from daemon.rpc.requests import Timestamp
from store.base import EventQuery, SessionInfo
from store.errors import ConfigError, ExportFailed, UsageError

# Tries of one request before an export gives up: about three seconds of a collector not answering.
TRIES = 5


@dataclass(frozen=True, slots=True)
class ExportRequest:
    endpoint: str | None = None  # None: export.otlp.endpoint, with export.otlp.headers
    sessions: list[str] = field(default_factory=list)  # none: every session with events in the window
    since: Timestamp | None = None
    until: Timestamp | None = None
    headers: dict[str, Any] | None = None
    include_content: bool | None = None  # None: export.otlp.include_content


@dataclass(slots=True)
class Usage:
    """The tokens and cost of the request spans sent, in ``toka report``'s terms: input is the
    uncached input (the spans' ``gen_ai.usage.input_tokens`` holds the whole prompt, cache
    reads and writes included, as the conventions ask)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_tokens: int = 0
    cache_read_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, span: Span) -> None:
        def number(name: str) -> Any:
            return span.attributes.get(name, 0)

        reads, writes = (
            number("gen_ai.usage.cache_read.input_tokens"),
            number("gen_ai.usage.cache_creation.input_tokens"),
        )
        self.input_tokens += number("gen_ai.usage.input_tokens") - reads - writes
        self.output_tokens += number("gen_ai.usage.output_tokens")
        self.cache_creation_tokens += writes
        self.cache_read_tokens += reads
        self.cost_usd += number("gen_ai.usage.cost")

    def to_json(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_tokens": self.cache_creation_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cost_usd": usd(Decimal(repr(self.cost_usd))),
        }


@dataclass(slots=True)
class Summary:
    endpoint: str
    include_content: bool
    sessions: int = 0
    spans: int = 0
    requests: int = 0
    tool_calls: int = 0
    agents: int = 0
    span_events: int = 0
    skipped_requests: int = 0
    dropped: int = 0
    posts: int = 0
    bytes: int = 0
    retries: int = 0
    usage: Usage = field(default_factory=lambda: Usage())

    def count(self, spans: list[Span]) -> None:
        for span in spans:
            operation = span.attributes.get("gen_ai.operation.name")
            self.requests += operation == "chat"
            self.tool_calls += operation == "execute_tool"
            self.agents += operation == "invoke_agent"
            self.span_events += len(span.events)
            if operation == "chat":
                self.usage.add(span)

    def to_json(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "include_content": self.include_content,
            "sessions": self.sessions,
            "spans": self.spans,
            "requests": self.requests,
            "tool_calls": self.tool_calls,
            "agents": self.agents,
            "span_events": self.span_events,
            "skipped_requests": self.skipped_requests,
            "dropped": self.dropped,
            "posts": self.posts,
            "bytes": self.bytes,
            "retries": self.retries,
            "usage": self.usage.to_json(),
        }


def export_target(endpoint: str, headers: Any) -> tuple[str, dict[str, str]]:
    """The traces URL and the headers of a request, or UsageError saying what is wrong."""
    try:
        url = traces_url(endpoint)
    except ValueError as exc:
        raise UsageError(f"bad endpoint: {exc}", ENDPOINT_EXAMPLE) from None
    try:
        return url, header_table(headers)
    except ValueError as exc:
        raise UsageError(f"bad header: {exc}", HEADERS_EXAMPLE) from None


class Exporter(Component):
    def __init__(self, core: Core, costs: Costs, refs: Refs) -> None:
        self.core = core
        self.costs = costs
        self.refs = refs

    async def export(self, request: ExportRequest, progress: Callable[[int, int], None] | None) -> dict[str, Any]:
        settings = self.core.settings[OtlpExportSettings]
        endpoint = request.endpoint if request.endpoint is not None else settings.endpoint
        if not endpoint:
            raise UsageError(
                "no collector to export to", f"give --endpoint URL ({ENDPOINT_EXAMPLE}) or set export.otlp.endpoint"
            )
        configured = request.endpoint is None or request.endpoint == settings.endpoint
        headers = request.headers if request.headers is not None else (settings.headers if configured else {})
        url, headers = export_target(endpoint, headers)
        if request.since is not None and request.until is not None and request.since >= request.until:
            raise UsageError("since is not before until", "give the earlier time as --since")
        try:
            from daemon.export.collector import Collector, deliver
        except ImportError as exc:
            raise ConfigError(f"exporting to OpenTelemetry needs {missing(exc)}", INSTALL) from None
        infos = await self._sessions(request)
        include = settings.include_content if request.include_content is None else request.include_content
        content = content_of(include, self.core.settings[RedactionSettings].kinds)
        summary = Summary(url, include)
        collector = Collector(url, headers, settings.request_timeout_s)
        total, done = sum(info.events for info in infos), 0
        pending: list[Span] = []

        async def send(spans: list[Span]) -> None:
            try:
                delivered = await deliver(collector, spans, max_wait_s=settings.retry_max_s, tries=TRIES)
            except Exception as exc:
                message = getattr(exc, "message", str(exc))
                raise ExportFailed(
                    f"{message} ({summary.spans} spans were sent before)",
                    "check that the collector runs and that the endpoint is its OTLP/HTTP address (port 4318);"
                    " exporting again sends the same spans, which the collector keeps once",
                ) from None
            summary.spans += delivered.spans
            summary.dropped += delivered.dropped
            summary.posts += delivered.requests
            summary.bytes += delivered.bytes
            summary.retries += delivered.retries
            summary.count(spans)

        try:
            for info in infos:
                calls = CallSpans(self.costs.prices, content, window=(request.since, request.until))
                agents = AgentSpans(info.session, content)
                async for event in self.core.store.scan(EventQuery(session=info.session)):
                    pending += await calls.feed([event])
                    if (request.since is None or event.ts >= request.since) and (
                        request.until is None or event.ts < request.until
                    ):
                        agents.feed(event)
                    done += 1
                    if len(pending) >= settings.batch_spans:
                        await send(pending)
                        pending = []
                    if progress is not None and done % 256 == 0:
                        progress(done, total)
                pending += await calls.unfinished(info.session) + agents.spans()
                summary.sessions += 1
                summary.skipped_requests += calls.skipped
            if pending:
                await send(pending)
        finally:
            await collector.close()
        if progress is not None:
            progress(total, total)
        return summary.to_json()

    async def _sessions(self, request: ExportRequest) -> list[SessionInfo]:
        if request.sessions:
            names = dict.fromkeys([await self.refs.session(ref) for ref in request.sessions])
            return [await self.core.store.session(name) for name in names]
        return [
            info
            for info in await self.core.store.sessions()
            if (request.since is None or info.last_ts >= request.since)
            and (request.until is None or info.first_ts < request.until)
        ]
