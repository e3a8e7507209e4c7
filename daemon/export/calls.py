"""The spans of a session's model requests and tool calls, built from its events as they come.

:class:`CallSpans` is fed events in log order and returns the spans they complete: a ``usage``
event completes its request (one span, at once), a ``tool.result`` completes the ``tool.call``
it answers (by ``tool_use_id`` or ``call_id``). A request counts as ``toka report`` counts it
(store/usage.py): a usage event of a request another source reported first sends nothing (it
is counted in ``skipped``), and a revision (more output of a response already counted) is a span
of its own carrying only that output, so the spans' tokens and costs add up to the report's.

A request span starts at its agent's latest input (a user message or a tool result, the last
thing the model was waiting for) and ends at its usage event; without one (telemetry-only
sessions), at its usage event less the ``duration_ms`` the agent reported, else it has no
length. The export feeds whole sessions from their first event; the forwarder starts anywhere,
so, handed the store, it reads what came before in a session the first time it meets it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from daemon.agents.model import is_main
from daemon.agents.usage import MAIN_AGENT
from daemon.contract.kinds import Kind
from daemon.cost.prices import PriceTable, Tokens
from daemon.export.content import Content
from daemon.export.spans import CLIENT, INTERNAL, AttributeValue, Span, agent_span_id, event_span_id, ns, trace_id
from store.base import EventQuery, EventStore
from store.events import Event
from store.usage import Claims, class_prompt, class_speed, usage_counts, usage_origin, usage_row

USAGE, CALL, RESULT = Kind.USAGE, Kind.TOOL_CALL, Kind.TOOL_RESULT
# Events read back to find an agent's latest input, when the forwarder meets a session mid-way.
LOOK_BACK = 500
# genai-prices' provider ids as the conventions' gen_ai.provider.name names them.
PROVIDERS = {
    "anthropic": "anthropic",
    "openai": "openai",
    "google": "gcp.gemini",
    "aws": "aws.bedrock",
    "azure": "azure.ai.openai",
    "mistral": "mistral_ai",
    "deepseek": "deepseek",
    "x-ai": "x_ai",
    "groq": "groq",
    "cohere": "cohere",
    "perplexity": "perplexity",
}
CLIENT_PROVIDERS = {"claude-code": "anthropic", "codex": "openai"}
OTHER_PROVIDER = "_OTHER"  # the conventions' value for a provider they do not list


def agent_name(event: Event) -> str:
    """The agent an event belongs to, the session's main agent always as ``main``."""
    name = event.agent or MAIN_AGENT
    return MAIN_AGENT if is_main(event.session, name) else name


def call_id(payload: dict[str, Any]) -> str | None:
    found = payload.get("tool_use_id", payload.get("call_id"))
    return found if isinstance(found, str) and found else None


def text_field(payload: dict[str, Any], name: str, default: str) -> str:
    value = payload.get(name)
    return value if isinstance(value, str) and value else default


def is_input(event: Event) -> bool:
    """Whether the model waited for this event: what a request starts after."""
    return event.kind == RESULT or (event.kind == Kind.MESSAGE and event.payload.get("role") == "user")


def parent_of(event: Event) -> bytes:
    return agent_span_id(event.session, agent_name(event))


class CallSpans:
    def __init__(
        self,
        prices: PriceTable,
        content: Content | None = None,
        store: EventStore | None = None,
        window: tuple[int | None, int | None] = (None, None),
    ) -> None:
        self.prices = prices
        self.content = content
        self.store = store  # read what came before a session's first event fed (the forwarder)
        self.since, self.until = window
        self.claims = Claims()
        self.calls: dict[tuple[str, str], Event | str] = {}  # open tool calls: the call, or its id
        self.inputs: dict[tuple[str, str], int] = {}  # (session, agent) -> ts of its latest input
        self.known: set[str] = set()  # sessions whose earlier events were read or needed no reading
        self.skipped = 0  # usage events of a request another source reported first

    async def feed(self, events: Iterable[Event]) -> list[Span]:
        spans = []
        for event in events:
            if self.store is not None and event.session not in self.known:
                await self._read_before(event)
            self.known.add(event.session)
            span = await self._span(event)
            # A request by its usage event's time, a tool call by when it was made.
            if span is not None and self._in_window(span.start_ns // 1000 if event.kind == RESULT else event.ts):
                spans.append(span)
        return spans

    def _in_window(self, ts: int) -> bool:
        return (self.since is None or ts >= self.since) and (self.until is None or ts < self.until)

    async def _span(self, event: Event) -> Span | None:
        if is_input(event):
            self.inputs[(event.session, agent_name(event))] = event.ts
        if event.kind == USAGE:
            if not self.claims.counts(event.session, event.payload):
                self.skipped += 1
                return None
            return self.request(event)
        if event.kind == CALL and (found := call_id(event.payload)):
            self.calls[(event.session, found)] = event
        elif event.kind == RESULT and (found := call_id(event.payload)):
            call = self.calls.pop((event.session, found), None)
            if isinstance(call, str) and self.store is not None:
                call = await self.store.get(call)
            if isinstance(call, Event):
                return self.tool(call, event)
        return None

    async def _read_before(self, event: Event) -> None:
        """The claims and latest inputs of the session's events before ``event``."""
        store = self.store
        assert store is not None
        async for earlier in store.scan(EventQuery(session=event.session, kinds=(USAGE,), before_seq=event.seq)):
            self.claims.counts(earlier.session, earlier.payload)
        recent = await store.query(
            EventQuery(session=event.session, before_seq=event.seq, order="desc", limit=LOOK_BACK)
        )
        for earlier in reversed(recent):
            if is_input(earlier):
                self.inputs[(earlier.session, agent_name(earlier))] = earlier.ts

    def request(self, event: Event) -> Span:
        payload = event.payload
        counts = usage_counts(payload)
        model = text_field(payload, "model", "")
        agent = agent_name(event)
        start = self._request_start(event, agent)
        provider = self._provider(model, payload)
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.system": provider,
            "gen_ai.conversation.id": event.session,
            "gen_ai.agent.name": agent,
            "gen_ai.usage.input_tokens": counts.prompt if counts.calls else 0,
            "gen_ai.usage.output_tokens": counts.output,
            "gen_ai.usage.cache_read.input_tokens": counts.cache_read,
            "gen_ai.usage.cache_creation.input_tokens": counts.cache_creation,
            "toka.event.id": event.id,
            "toka.usage.source": usage_origin(payload),
        }
        if model:
            attributes["gen_ai.request.model"] = attributes["gen_ai.response.model"] = model
        response = payload.get("message_id") or payload.get("request_id")
        if isinstance(response, str) and response:
            attributes["gen_ai.response.id"] = response
        reasoning = payload.get("reasoning_output_tokens")
        if isinstance(reasoning, int) and not isinstance(reasoning, bool) and reasoning > 0:
            attributes["gen_ai.usage.reasoning.output_tokens"] = reasoning
        if counts.cache_creation_1h:
            attributes["toka.usage.cache_creation_1h.input_tokens"] = counts.cache_creation_1h
        if payload.get("revision") is True:
            attributes["toka.usage.revision"] = True
        cost = self.cost(event)
        if cost is not None:
            attributes["gen_ai.usage.cost"] = float(cost)
        return Span(
            trace_id(event.session),
            event_span_id(event.id),
            parent_of(event),
            f"chat {model}" if model else "chat",
            CLIENT,
            ns(start),
            ns(event.ts),
            attributes,
        )

    def _request_start(self, event: Event, agent: str) -> int:
        ready = self.inputs.get((event.session, agent))
        if event.payload.get("revision") is not True and ready is not None and ready <= event.ts:
            return ready
        reported = event.payload.get("attributes")
        duration = reported.get("duration_ms") if isinstance(reported, dict) else None
        try:
            return event.ts - max(0, round(float(duration) * 1000)) if duration is not None else event.ts
        except (TypeError, ValueError, OverflowError):
            return event.ts

    def _provider(self, model: str, payload: dict[str, Any]) -> str:
        found = self.prices.find(model) if model else None
        if found is not None and found.provider in PROVIDERS:
            return PROVIDERS[found.provider]
        client = payload.get("client")
        if isinstance(client, str) and client in CLIENT_PROVIDERS:
            return CLIENT_PROVIDERS[client]
        if model.startswith("claude"):
            return "anthropic"
        if model.startswith(("gpt", "o1", "o3", "o4", "codex")):
            return "openai"
        return OTHER_PROVIDER

    def cost(self, event: Event) -> Decimal | None:
        """What the request cost in USD, priced as ``toka report`` prices it (at its quarter
        hour's prices, its tier by its prompt class); None when its model has no price."""
        row = usage_row(event.ts, event.session, event.agent, event.payload)
        found = self.prices.find(row.model)
        if found is None:
            return None
        rates = found.rates(datetime.fromtimestamp(row.bucket / 1_000_000, UTC), class_speed(row.prompt_class))
        tokens = Tokens(
            row.input_tokens,
            row.output_tokens,
            row.cache_creation_tokens,
            row.cache_creation_1h_tokens,
            row.cache_read_tokens,
        )
        return rates.cost(tokens, class_prompt(row.prompt_class))

    def tool(self, call: Event, result: Event | None) -> Span:
        """A tool call's span: to its result, or, with none (the session ended first), no length
        and an error status."""
        tool = text_field(call.payload, "tool", "tool")
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.type": "function",
            "gen_ai.conversation.id": call.session,
            "gen_ai.agent.name": agent_name(call),
            "toka.event.id": call.id,
        }
        if (found := call_id(call.payload)) is not None:
            attributes["gen_ai.tool.call.id"] = found
        error = None
        if result is None:
            error = "no result was recorded"
        elif result.payload.get("is_error") is True or result.payload.get("ok") is False:
            error = "the tool reported an error"
            attributes["error.type"] = "tool_error"
        if self.content is not None:
            if "input" in call.payload:
                attributes["gen_ai.tool.call.arguments"] = self.content.text(call.payload["input"])
            if result is not None and "output" in result.payload:
                attributes["gen_ai.tool.call.result"] = self.content.text(result.payload["output"])
        end = call.ts if result is None else max(call.ts, result.ts)
        return Span(
            trace_id(call.session),
            event_span_id(call.id),
            parent_of(call),
            f"execute_tool {tool}",
            INTERNAL,
            ns(call.ts),
            ns(end),
            attributes,
            error=error,
        )

    async def unfinished(self, session: str) -> list[Span]:
        """The session's calls still open, as spans without a result; they are closed here."""
        spans = []
        for key in [key for key in self.calls if key[0] == session]:
            call = self.calls.pop(key)
            if isinstance(call, str) and self.store is not None:
                call = await self.store.get(call)
            if isinstance(call, Event) and self._in_window(call.ts):
                spans.append(self.tool(call, None))
        return spans

    def forget(self, session: str) -> None:
        """Drop what is kept of a session whose spans are all sent, so that memory stays flat
        however many sessions pass; should it go on, its earlier events are read again."""
        self.inputs = {key: ts for key, ts in self.inputs.items() if key[0] != session}
        self.claims.held = {key: origin for key, origin in self.claims.held.items() if key[0] != session}
        self.known.discard(session)
