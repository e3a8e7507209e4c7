"""Claude Code's and Codex's telemetry as the log's events (docs/otel.md has the whole table).

Each log record is named by its ``event.name`` attribute (Codex: ``codex.X``; Claude Code: the
bare ``X``, with ``claude_code.X`` in the body) and lands in the session its agent names
(``session.id``, Codex's ``conversation.id``): the same session a transcript import of that
conversation fills. A request's usage becomes a ``usage`` event with ``origin: "telemetry"``
(Claude Code's ``api_request``; Codex's ``sse_event`` of kind ``response.completed`` that
carries token counts), counted once however many sources report it (store/usage.py,
``usage_names``). The other records of a session and prompt (``prompt.id``) in one request
(``api_error``, ``user_prompt``, ``tool_result``, ``tool_decision`` and the rest of either
catalogue) become one ``telemetry`` event holding them in the order the agent numbered them
(``event.sequence``): a prompt's telemetry reads as one piece, and the log takes a few events
per export instead of one per record. Codex's other ``sse_event`` records (one per streamed
event) and records without an ``event.name`` (Codex's debug text) are left out: counted, not
kept. Who sent them (user and account ids, terminal), the same on every record, is kept once
per event.

Numbers arrive as strings in some events and versions and as numbers in others; both are read.
Text the user or a tool wrote passes the configured redaction, and tool output and raw bodies are
cut to ``otel.max_output_bytes`` besides (their full size is kept). Metric points of a session
(Claude Code's ``token.usage`` and ``cost.usage`` among them) become one ``telemetry.counters``
event per request and session: counters beside the request events, never a second copy of them.
Keys come from the records (a request id, else a digest), so an exporter's retry of a batch adds
nothing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from daemon.contract.kinds import Kind
from daemon.otel.model import LogRecord, MetricPoint
from daemon.redact import redact
from store.errors import InvalidEvent
from store.events import NewEvent, digest, fit_name, format_ts, parse_ts

CLAUDE_CODE = "claude-code"
CODEX = "codex"
ORIGIN = "telemetry"  # a usage payload's ``origin`` when it came from telemetry (store/usage.py)
# Claude Code and Codex write these as placeholders when the user has not turned prompts on.
PLACEHOLDERS = ("<REDACTED>", "[REDACTED]")
# Text a person wrote or a model answered: redacted before it is stored.
PROSE = ("prompt", "prompt_text", "response", "error", "error.message")
# Tool input and output and raw API bodies: redacted, and cut to the size limit.
OUTPUT = ("output", "arguments", "tool_input", "tool_parameters", "body")
# Attributes every record repeats, read into the event's own fields and not kept again.
ENVELOPE = ("event.name", "event.timestamp", "event.sequence", "session.id", "conversation.id", "prompt.id")
# Who sent it, the same on every record: kept once per ``telemetry`` event, under ``identity``.
IDENTITY = (
    "user.id",
    "user.email",
    "user.account_uuid",
    "user.account_id",
    "organization.id",
    "terminal.type",
    "app.version",
    "anthropic.provider",
    "anthropic.custom_base_url",
    "auth_mode",
    "originator",
    "slug",
)
MAX_ID_CHARS = 200


@dataclass(frozen=True, slots=True)
class Rules:
    """What the mapping needs of the settings."""

    redaction: Collection[str]
    max_output_bytes: int


@dataclass(slots=True)
class Mapped:
    """A request's records as events, and what was left out."""

    events: list[NewEvent] = field(default_factory=list)
    rejected: int = 0  # named events with no session to land in, or with counts that cannot be
    ignored: int = 0  # records that are not agent events, and Codex's stream events
    # Why records were rejected: a reason and how many records it covers, in the order met.
    reasons: dict[str, int] = field(default_factory=dict)

    def reject(self, reason: str) -> None:
        self.rejected += 1
        self.reasons[reason] = self.reasons.get(reason, 0) + 1

    def why(self, items: str = "log records") -> str:
        """The partial success's message: each reason with its count."""
        said = "; ".join(f"{count} {reason}" for reason, count in self.reasons.items())
        return f"{self.rejected} {items} not kept: {said}"


def _number(value: Any) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            try:
                return float(value)
            except ValueError:
                return None
    return None


def _tokens(attributes: dict[str, Any], name: str) -> int:
    value = _number(attributes.get(name))
    return int(value) if value is not None and value >= 0 else 0


# The counts of a usage record, by agent: a negative or non-finite one refuses the record, which
# would otherwise take from (or add without bound to) the session's tokens and cost.
COUNTS = {
    CLAUDE_CODE: ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens",
                  "cache_creation_1h_tokens", "cost_usd", "cost_usd_micros"),
    CODEX: ("input_token_count", "output_token_count", "cached_token_count", "reasoning_token_count",
            "tool_token_count"),
}  # fmt: skip


def _bad_counts(agent: str, attributes: dict[str, Any]) -> str | None:
    """Why a usage record's counts cannot be kept (negative, not finite), or None."""
    for name in COUNTS[agent]:
        if name not in attributes:
            continue
        value = _number(attributes[name])
        if value is not None and not math.isfinite(value):
            return f"with {name} not a finite number"
        if value is not None and value < 0:
            return f"with a negative {name}"
    return None


def event_name(record: LogRecord) -> tuple[str, str] | None:
    """(agent, bare event name) of a record, or None when it is no agent event."""
    name = record.attributes.get("event.name")
    body = record.body if isinstance(record.body, str) else ""
    if isinstance(name, str) and name:
        if name.startswith("codex."):
            return CODEX, name[6:]
        if name.startswith("claude_code."):
            return CLAUDE_CODE, name[12:]
        if body.startswith("claude_code.") or record.scope.startswith("com.anthropic.claude_code"):
            return CLAUDE_CODE, name
        service = record.resource.get("service.name")
        return service if isinstance(service, str) and service else "otel", name
    if body.startswith("claude_code."):
        return CLAUDE_CODE, body[12:]
    return None


def qualified_name(agent: str, name: str) -> str:
    """An event's name with its agent's prefix: ``claude_code.api_request``, ``codex.sse_event``."""
    return f"{'claude_code' if agent == CLAUDE_CODE else agent}.{name}"


def _ts(record: LogRecord) -> int | None:
    """When it happened, in UTC microseconds: the record's time, else the ``event.timestamp``
    attribute (Codex sends a time of 0), else when the exporter observed it."""
    if record.time_ns:
        return record.time_ns // 1000
    stamp = record.attributes.get("event.timestamp")
    if isinstance(stamp, str):
        try:
            return parse_ts(stamp)
        except InvalidEvent:
            pass
    return record.observed_ns // 1000 or None


def _clean(attributes: dict[str, Any], rules: Rules) -> tuple[dict[str, Any], dict[str, int]]:
    """The attributes to keep: redacted and cut where they hold text; the cut ones' sizes."""
    kept: dict[str, Any] = {}
    cut: dict[str, int] = {}
    for name, value in attributes.items():
        if name in ENVELOPE or name in IDENTITY:
            continue
        if isinstance(value, str) and value not in PLACEHOLDERS and (name in PROSE or name in OUTPUT):
            value = redact(value, rules.redaction).text if rules.redaction else value
            if name in OUTPUT:
                raw = value.encode()
                if len(raw) > rules.max_output_bytes:
                    cut[name] = len(raw)
                    value = raw[: rules.max_output_bytes].decode(errors="ignore")
        kept[name] = value
    return kept, cut


def _claude_usage(attributes: dict[str, Any]) -> dict[str, Any]:
    """Claude Code's ``api_request`` as a usage payload (Anthropic's counts: input is uncached)."""
    uncached = _tokens(attributes, "input_tokens")
    creation = _tokens(attributes, "cache_creation_tokens")
    read = _tokens(attributes, "cache_read_tokens")
    cost = _number(attributes.get("cost_usd"))
    if cost is None and (micros := _number(attributes.get("cost_usd_micros"))) is not None:
        cost = micros / 1_000_000
    usage: dict[str, Any] = {
        "model": attributes.get("model") if isinstance(attributes.get("model"), str) else None,
        "input_tokens": uncached,
        "output_tokens": _tokens(attributes, "output_tokens"),
        "cache_creation_tokens": creation,
        "cache_read_tokens": read,
        "context_tokens": uncached + creation + read,
        "request_id": fit_name(attributes.get("request_id"), MAX_ID_CHARS),
        "cost_usd": cost,
    }
    if "cache_creation_1h_tokens" in attributes:
        usage["cache_creation_1h_tokens"] = _tokens(attributes, "cache_creation_1h_tokens")
    if isinstance(attributes.get("speed"), str):  # "fast": served in fast mode, billed at a premium
        usage["speed"] = attributes["speed"][:16]
    return usage


def _codex_usage(attributes: dict[str, Any]) -> dict[str, Any]:
    """Codex's token-bearing ``response.completed`` as a usage payload, in the convention its
    rollout's ``token_count`` has (OpenAI's: input includes cached, output includes reasoning);
    its ``tool_token_count`` holds the call's total."""
    whole = _tokens(attributes, "input_token_count")
    output = _tokens(attributes, "output_token_count")
    total = _tokens(attributes, "tool_token_count") or whole + output
    return {
        "model": attributes.get("model") if isinstance(attributes.get("model"), str) else None,
        "input_tokens": whole,
        "cached_input_tokens": _tokens(attributes, "cached_token_count"),
        "output_tokens": output,
        "reasoning_output_tokens": _tokens(attributes, "reasoning_token_count"),
        "total_tokens": total,
        "context_tokens": total,
    }


def _session(agent: str, attributes: dict[str, Any]) -> str | None:
    names = ("conversation.id", "session.id") if agent == CODEX else ("session.id", "conversation.id")
    for name in names:
        found = fit_name(attributes.get(name), MAX_ID_CHARS)
        if found is not None:
            return found
    return None


def _key(name: str, record: LogRecord) -> str:
    signature = json.dumps([name, record.time_ns, record.observed_ns, record.attributes], sort_keys=True, default=str)
    return f"otel:{name[:40]}:{digest(signature.encode())[:32]}"


def log_events(records: list[LogRecord], rules: Rules) -> Mapped:
    """A request's log records as events: a ``usage`` event per request, and the other records
    of each session and prompt in one ``telemetry`` event, in the order the agent numbered them
    (``event.sequence``), else by time."""
    mapped = Mapped()
    usage: list[tuple[str, int, int, NewEvent]] = []
    groups: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    firsts: dict[tuple[str, str | None], tuple[str, dict[str, Any], dict[str, Any]]] = {}
    for record in records:
        named = event_name(record)
        if named is None:
            mapped.ignored += 1
            continue
        agent, name = named
        attributes = record.attributes
        if agent == CODEX and name == "sse_event" and "input_token_count" not in attributes:
            mapped.ignored += 1  # one per streamed event; only the one with the tokens is usage
            continue
        session = _session(agent, attributes)
        if session is None:
            mapped.reject("named no session.id or conversation.id")
            continue
        usage_record = (agent, name) in ((CLAUDE_CODE, "api_request"), (CODEX, "sse_event"))
        if usage_record and (bad := _bad_counts(agent, attributes)) is not None:
            mapped.reject(f"{qualified_name(agent, name)} {bad}")
            continue
        ts = _ts(record)
        kept, cut = _clean(attributes, rules)
        found = _number(attributes.get("event.sequence"))
        sequence = int(found) if found is not None else None
        prompt = fit_name(attributes.get("prompt.id"), MAX_ID_CHARS)
        qualified = qualified_name(agent, name)
        if usage_record:
            counts = _claude_usage(attributes) if agent == CLAUDE_CODE else _codex_usage(attributes)
            payload = {"client": agent, "event": qualified, "prompt_id": prompt, "sequence": sequence}
            payload |= {"origin": ORIGIN} | counts | {"attributes": kept}
            request = counts.get("request_id")
            key = f"otel:req:{request}" if request else _key(name, record)
            who = fit_name(attributes.get("agent.name"), MAX_ID_CHARS) or "main"
            event = NewEvent(session, "usage", payload, who, ts, None, key)
            usage.append((session, -1 if sequence is None else sequence, ts or 0, event))
            firsts.setdefault((session, None), (agent, record.resource, _identity(attributes)))
            continue
        entry: dict[str, Any] = {"event": qualified, "sequence": sequence, "ts": format_ts(ts) if ts else None}
        entry["attributes"] = kept
        if cut:
            entry["cut_bytes"] = cut
        groups.setdefault((session, prompt), []).append(entry)
        firsts.setdefault((session, prompt), (agent, record.resource, _identity(attributes)))
    found_events = usage + [_group(session, prompt, entries, firsts[(session, prompt)]) for (session, prompt), entries
                            in groups.items()]  # fmt: skip
    found_events.sort(key=lambda item: (item[0], item[1], item[2]))
    sessions: dict[str, NewEvent] = {}
    for session, _, _, event in found_events:
        if session not in sessions:  # one per session, at its first event here; its key makes repeats no-ops
            client = event.payload["client"]
            resource = next(first[1] for (name, _), first in firsts.items() if name == session)
            sessions[session] = session_meta(session, client, resource, event.ts)
    mapped.events = list(sessions.values()) + [item[3] for item in found_events]
    return mapped


def _identity(attributes: dict[str, Any]) -> dict[str, Any]:
    return {name: attributes[name] for name in IDENTITY if name in attributes}


def _group(
    session: str, prompt: str | None, entries: list[dict[str, Any]], first: tuple[str, dict[str, Any], dict[str, Any]]
) -> tuple[str, int, int, NewEvent]:
    """The ``telemetry`` event of one session's and prompt's records in a request."""
    entries.sort(key=lambda entry: (-1 if entry["sequence"] is None else entry["sequence"], entry["ts"] or ""))
    client, _, identity = first
    payload = {"client": client, "prompt_id": prompt, "identity": identity, "records": entries}
    signature = json.dumps(entries, sort_keys=True, default=str).encode()
    stamp = next((entry["ts"] for entry in entries if entry["ts"]), None)
    ts = parse_ts(stamp) if stamp else None
    event = NewEvent(session, "telemetry", payload, "main", ts, None, f"otel:{digest(signature)[:32]}")
    order = entries[0]["sequence"]
    return session, -1 if order is None else order, ts or 0, event


def session_meta(session: str, client: str, resource: dict[str, Any], ts: int | None) -> NewEvent:
    """Which agent a session came from, for a session known from telemetry only (a transcript's
    own ``session.meta``, with its working directory, is preferred where both are)."""
    version = resource.get("service.version")
    payload = {"source": client, "via": "telemetry", "version": version if isinstance(version, str) else None}
    return NewEvent(session, Kind.SESSION_META, payload, None, ts, None, "otel:meta")


# Counters of tokens and cost (Claude Code's ``claude_code.token.usage``, ``.cost.usage``): never
# negative, whatever their temporality.
COUNTERS = ("token.usage", "cost.usage")
# Point attributes that say who, not what: the session they belong to is the event's own.
_WHO = frozenset((*IDENTITY, "session.id", "conversation.id"))


def metric_events(points: list[MetricPoint]) -> Mapped:
    """The sum points of each session as one ``telemetry.counters`` event; points of no
    session (Codex's metrics carry none) and other shapes are left out, and points that are not
    finite or take from a token or cost counter refused."""
    mapped = Mapped()
    sessions: dict[str, list[dict[str, Any]]] = {}
    times: dict[str, int] = {}
    for point in points:
        session = fit_name(point.attributes.get("session.id"), MAX_ID_CHARS) or fit_name(
            point.attributes.get("conversation.id"), MAX_ID_CHARS
        )
        if point.shape != "sum" or session is None:
            mapped.ignored += 1
            continue
        if not math.isfinite(point.value):
            mapped.reject(f"{point.metric} points with a value that is not a finite number")
            continue
        if point.value < 0 and point.metric.endswith(COUNTERS):
            mapped.reject(f"{point.metric} points with a negative value")
            continue
        sessions.setdefault(session, []).append(
            {
                "metric": point.metric,
                "unit": point.unit,
                "temporality": "cumulative" if point.temporality == 2 else "delta",
                "start_ns": point.start_ns,
                "time_ns": point.time_ns,
                "value": point.value,
                "attributes": {k: v for k, v in point.attributes.items() if k not in _WHO},
            }
        )
        times[session] = max(times.get(session, 0), point.time_ns)
    for session, counted in sessions.items():
        signature = json.dumps(counted, sort_keys=True, default=str).encode()
        mapped.events.append(
            NewEvent(
                session,
                Kind.TELEMETRY_COUNTERS,
                {"points": counted},
                None,
                times[session] // 1000 or None,
                None,
                f"otel:counters:{digest(signature)[:32]}",
            )
        )
    return mapped
