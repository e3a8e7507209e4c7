"""The agent spans of a session: one per agent, the main agent's the root of the session's trace
and the others its children. Each spans its agent's events (the root the whole session) and
carries what happened to the agent as span events: its lifecycle transitions, its handoffs, the
session's end and its compactions; with content included, its messages too (redacted, at most
``MESSAGE_EVENTS`` of them).

An agent span can only be sent once its agent's last event is known: the forwarder sends them
when the session ends or goes quiet (daemon/export/forwarder.py), the export at the end of each
session. Fed the same events, :class:`AgentSpans` builds the same spans, ids and times alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from daemon.agents.usage import MAIN_AGENT
from daemon.contract.kinds import Kind
from daemon.contract.states import AgentState
from daemon.export.calls import agent_name, text_field
from daemon.export.content import MESSAGE_EVENTS, Content
from daemon.export.spans import INTERNAL, AttributeValue, Span, SpanEvent, agent_span_id, ns, trace_id
from store.events import Event

LIFECYCLE, HANDOFF, SESSION_END = Kind.LIFECYCLE, Kind.HANDOFF, Kind.HOOK_SESSION_END
COMPACTIONS = ("compaction", "compression")


@dataclass(slots=True)
class _Agent:
    first_ts: int
    last_ts: int
    events: int = 0
    state: str | None = None  # its latest lifecycle state
    marks: list[SpanEvent] = field(default_factory=list)
    messages: int = 0  # message events left off past MESSAGE_EVENTS


def _text_attributes(prefix: str, values: dict[str, object]) -> dict[str, AttributeValue]:
    return {f"{prefix}.{name}": value for name, value in values.items() if isinstance(value, (str, int, float, bool))}


def ends_session(event: Event) -> bool:
    """Whether ``event`` says its session is over: Claude Code's SessionEnd, or its main agent
    terminated. The session's agent spans are then sent without waiting for it to go quiet."""
    if event.kind == SESSION_END:
        return True
    return (
        event.kind == LIFECYCLE and event.payload.get("to") == AgentState.TERMINATED and agent_name(event) == MAIN_AGENT
    )


class AgentSpans:
    def __init__(self, session: str, content: Content | None = None) -> None:
        self.session = session
        self.content = content
        self.agents: dict[str, _Agent] = {}
        self.ended = False  # the session ended: its SessionEnd, or its main agent terminated

    def feed(self, event: Event) -> None:
        name = agent_name(event)
        agent = self.agents.get(name)
        if agent is None:
            agent = self.agents[name] = _Agent(event.ts, event.ts)
        agent.first_ts, agent.last_ts = min(agent.first_ts, event.ts), max(agent.last_ts, event.ts)
        agent.events += 1
        mark = self._mark(event, agent)
        if mark is not None:
            agent.marks.append(mark)

    def _mark(self, event: Event, agent: _Agent) -> SpanEvent | None:
        payload = event.payload
        if event.kind == LIFECYCLE:
            agent.state = payload.get("to") if isinstance(payload.get("to"), str) else agent.state
            if agent.state == AgentState.TERMINATED and agent_name(event) == MAIN_AGENT:
                self.ended = True
            fields = {k: payload.get(k) for k in ("from", "to", "reason", "detail", "fill_pct")}
            return SpanEvent("toka.lifecycle", ns(event.ts), _text_attributes("toka.lifecycle", fields))
        if event.kind == HANDOFF:
            fields = {k: payload.get(k) for k in ("trace", "predecessor", "successor", "reason")}
            return SpanEvent(
                "toka.handoff", ns(event.ts), _text_attributes("toka.handoff", fields) | {"toka.event.id": event.id}
            )
        if event.kind == SESSION_END:
            self.ended = True
            return SpanEvent("toka.session.end", ns(event.ts), {"toka.event.id": event.id})
        if event.kind in COMPACTIONS:
            return SpanEvent(f"toka.{event.kind}", ns(event.ts), {"toka.event.id": event.id})
        if event.kind == Kind.MESSAGE and self.content is not None and isinstance(payload.get("text"), str):
            if sum(m.name == "toka.message" for m in agent.marks) >= MESSAGE_EVENTS:
                agent.messages += 1
                return None
            role = text_field(payload, "role", "unknown")
            text = self.content.text(payload["text"])
            return SpanEvent("toka.message", ns(event.ts), {"toka.message.role": role, "toka.message.text": text})
        return None

    def spans(self) -> list[Span]:
        """One span per agent fed, and the root (the main agent's) whether or not it had events."""
        if not self.agents:
            return []
        trace = trace_id(self.session)
        root = agent_span_id(self.session, MAIN_AGENT)
        first = min(agent.first_ts for agent in self.agents.values())
        last = max(agent.last_ts for agent in self.agents.values())
        main = self.agents.get(MAIN_AGENT) or _Agent(first, last)
        spans = [self._span(MAIN_AGENT, main, trace, b"", first, last)]
        for name, agent in sorted(self.agents.items()):
            if name != MAIN_AGENT:
                spans.append(self._span(name, agent, trace, root, agent.first_ts, agent.last_ts))
        return spans

    def _span(self, name: str, agent: _Agent, trace: bytes, parent: bytes, first: int, last: int) -> Span:
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": name,
            "gen_ai.agent.id": f"{self.session}/{name}",
            "gen_ai.conversation.id": self.session,
            "toka.session": self.session,
            "toka.agent.events": agent.events,
        }
        if agent.state is not None:
            attributes["toka.agent.state"] = agent.state
        if agent.messages:
            attributes["toka.message.left_off"] = agent.messages
        return Span(
            trace,
            agent_span_id(self.session, name),
            parent,
            f"invoke_agent {name}",
            INTERNAL,
            ns(first),
            ns(last),
            attributes,
            tuple(agent.marks),
            error="the agent ended in ERROR" if agent.state == AgentState.ERROR else None,
        )
