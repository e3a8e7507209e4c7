"""`toka mcp`'s resources (a session's transcript, a handoff, a memory scope) and its prompt
(``continue-from-handoff``), read through the daemon like the tools."""

from __future__ import annotations

import json
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from pydantic import Field

from store.errors import NotFound, TokaError
from toka_cli.mcp.link import Link

# A transcript resource shows the session's first page of events; the rest is named, not sent
# (an agent pages on with the search tool or `toka events`).
TRANSCRIPT_EVENTS = 500
# Payload fields that hold an event's text, in the order they are looked for.
TEXT_FIELDS = ("text", "content", "summary", "output", "message", "prompt")
EVENT_TEXT_CHARS = 4000


def event_text(payload: dict[str, Any]) -> str:
    for name in TEXT_FIELDS:
        value = payload.get(name)
        if isinstance(value, str) and value.strip():
            text = value
            break
    else:
        text = "```json\n" + json.dumps(payload, ensure_ascii=False, sort_keys=True) + "\n```"
    return text if len(text) <= EVENT_TEXT_CHARS else text[: EVENT_TEXT_CHARS - 1] + "…"


def transcript_markdown(session: str, events: list[dict[str, Any]], more: bool) -> str:
    lines = [f"# Session {session}", ""]
    for event in events:
        agent = f" ({event['agent']})" if event.get("agent") else ""
        lines += [f"## {event['seq']} · {event['kind']}{agent} · {event['ts']}", "", event_text(event["payload"]), ""]
    if more:
        lines.append(f"_Only the first {len(events)} events are shown; search the session for the rest._")
    return "\n".join(lines).rstrip() + "\n"


def resource_error(exc: TokaError) -> ResourceError:
    message = exc.lines().strip()
    return ResourceNotFoundError(message) if isinstance(exc, NotFound) else ResourceError(message)


def register(server: MCPServer, link: Link) -> None:
    """Add the resources and the prompt to ``server``."""

    async def read(op: str, **args: Any) -> Any:
        try:
            return await link.raw_call(op, **args)
        except TokaError as exc:
            raise resource_error(exc) from None

    @server.resource("toka://session/{session_id}", name="session", mime_type="text/markdown")
    async def session_transcript(session_id: str) -> str:
        """A session's events as a markdown transcript (its first 500 events)."""
        page = await read("events.query", session=session_id, limit=TRANSCRIPT_EVENTS)
        return transcript_markdown(page["session"], page["events"], page["more"])

    @server.resource("toka://handoff/{handoff_id}", name="handoff", mime_type="text/markdown")
    async def handoff_document(handoff_id: str) -> str:
        """A stored handoff document as markdown."""
        return str((await read("handoffs.get", id=handoff_id))["markdown"])

    @server.resource("toka://memory/{scope}", name="memory", mime_type="application/json")
    async def memory_scope(scope: str) -> str:
        """Every live entry of a memory scope, as JSON."""
        return json.dumps(await read("memory.list", scope=scope), ensure_ascii=False, indent=2)

    @server.prompt(name="continue-from-handoff")
    async def continue_from_handoff(
        handoff_id: Annotated[
            str | None, Field(description="A handoff id or prefix; default: the latest handoff.")
        ] = None,
    ) -> str:
        """Carry on where the previous agent stopped: its handoff as a continuation prompt."""
        if handoff_id is None:
            listed = (await read("handoffs.list", active=True))["handoffs"]
            if not listed:
                raise ResourceNotFoundError("error: no handoff stored yet\nhint: create one with the handoff tool")
            handoff_id = listed[-1]["id"]
        return str((await read("handoffs.get", id=handoff_id))["prompt"])
