"""The tools `toka mcp` offers an agent, each one daemon op (docs/mcp.md lists them).

Every argument is declared with a type and a description, so the SDK derives the JSON schema the
agent sees and checks calls against it before a tool runs (a bad argument is an error result).
Results are the daemon's JSON documents (docs/json.md), returned as structured output.
"""

from __future__ import annotations

import json
import time
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field, WithJsonSchema

from daemon.contract.policies import NoteKind, choices_of
from daemon.contract.times import TIME_FORMS, iso_utc, moment
from store.errors import UsageError
from toka_cli.mcp.link import Link, require, tool_error

SessionParam = Annotated[
    str | None,
    Field(
        description="Session id or unique prefix (its main agent), or SESSION/NAME for one agent of it;"
        " default: the current session (see toka's docs/mcp.md)."
    ),
]
# Time arguments take every form of the CLI's --since (daemon/contract/times.py).
SinceParam = Annotated[
    str | None, Field(description=f"Only events at or after this time: {TIME_FORMS}; local unless an offset is given.")
]
UntilParam = Annotated[str | None, Field(description="Only events before this time, in the same forms as since.")]
# Roughly four characters a token: the estimate the daemon's budgets use for text of unknown model.
CHARS_PER_TOKEN = 4
# The longest a memory value may be kept, in seconds: the daemon's bound
# (daemon/memory/service.py MAX_TTL_S, which a test keeps equal), in the tool's schema.
MAX_TTL_S = 315_360_000
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


def request_time(value: str | None, argument: str) -> str | None:
    """A time argument as the daemon's requests carry it (ISO-8601 UTC); a tool error when it is
    none of the forms."""
    if value is None:
        return None
    try:
        return iso_utc(moment(value, time.time(), None, argument))
    except UsageError as exc:
        raise tool_error(exc) from None


def estimate_tokens(item: Any) -> int:
    return -(-len(json.dumps(item, ensure_ascii=False)) // CHARS_PER_TOKEN)


def register(server: MCPServer, link: Link) -> None:
    """Add every tool to ``server``, each calling the daemon through ``link``."""

    @server.tool(annotations=READ_ONLY)
    async def search(
        query: Annotated[
            str, Field(description="Words, names or paths to find, as written (every one of them); see fts.")
        ],
        session: Annotated[
            str | None,
            Field(description="Only this session (id or prefix; SESSION/NAME: one agent of it); default: all."),
        ] = None,
        kinds: Annotated[
            list[str] | None, Field(description='Only these event kinds, e.g. ["message", "tool.*", "note.*"].')
        ] = None,
        since: SinceParam = None,
        until: UntilParam = None,
        limit: Annotated[int, Field(ge=1, le=200, description="At most this many hits.")] = 20,
        fts: Annotated[
            bool, Field(description='Words only, the query read as SQLite FTS5 syntax ("phrases", pre*, OR, NOT).')
        ] = False,
        semantic: Annotated[
            bool, Field(description="Meaning only: events nearest the query's embedding, sharing words or not.")
        ] = False,
    ) -> dict[str, Any]:
        """Search everything toka recorded by words and meaning: event refs with snippets, best first, each matched by words, meaning or both."""  # noqa: E501
        found = await link.call(
            "search",
            query=query,
            session=session,
            kinds=kinds,
            since=request_time(since, "since"),
            until=request_time(until, "until"),
            limit=limit,
            fts=fts or None,
            semantic=semantic or None,
        )
        return dict(found)

    @server.tool(annotations=READ_ONLY)
    async def recall(
        query: Annotated[str, Field(description="What to remember: words or a question about the topic at hand.")],
        session: SessionParam = None,
        budget: Annotated[int, Field(ge=50, le=100_000, description="Token budget for the items returned.")] = 2000,
        limit: Annotated[int, Field(ge=1, le=100, description="At most this many items.")] = 10,
    ) -> dict[str, Any]:
        """Recall for a query: the session's recent events, matches from all sessions, summaries; within a budget."""
        found = await link.call("recall", query=query, session=await link.session(session), limit=limit)
        kept, tokens = [], 0
        for item in found["items"]:
            cost = estimate_tokens(item)
            if tokens + cost > budget:
                continue
            kept.append(item)
            tokens += cost
        dropped = len(found["items"]) - len(kept)
        return {**found, "items": kept, "budget": budget, "tokens": tokens, "dropped": dropped}

    @server.tool(annotations=READ_ONLY)
    async def memory_get(
        scope: Annotated[str, Field(description="The scope: global, session:<name>, agent:<id> or trace:<id>.")],
        key: Annotated[str, Field(description="The key within the scope.")],
    ) -> dict[str, Any]:
        """Read one remembered value with its version (an error when it is not set)."""
        return dict(await link.call("memory.get", scope=scope, key=key))

    @server.tool(annotations=WRITES)
    async def memory_set(
        scope: Annotated[str, Field(description="The scope: global, session:<name>, agent:<id> or trace:<id>.")],
        key: Annotated[str, Field(description="The key within the scope.")],
        value: Annotated[Any, Field(description="Any JSON value (at most 1 MiB).")],
        expect_version: Annotated[
            int | None,
            Field(ge=0, description="Compare-and-set: write only if the key is at this version (0: not set yet)."),
        ] = None,
        ttl: Annotated[
            float | None,
            Field(gt=0, le=MAX_TTL_S, description="Forget the value after this many seconds (at most 10 years)."),
        ] = None,
        pinned: Annotated[bool | None, Field(description="Pin it into every working context.")] = None,
    ) -> dict[str, Any]:
        """Remember a JSON value under scope/key; returns the entry with its new version."""
        return dict(
            await link.call(
                "memory.set", scope=scope, key=key, value=value, expect_version=expect_version, ttl=ttl, pinned=pinned
            )
        )

    @server.tool(annotations=READ_ONLY)
    async def memory_list(
        scope: Annotated[str | None, Field(description="Only this scope; default: every scope.")] = None,
        prefix: Annotated[str, Field(description="Only keys starting with this.")] = "",
        pinned: Annotated[bool | None, Field(description="Only pinned (true) or unpinned (false) entries.")] = None,
    ) -> dict[str, Any]:
        """List remembered entries, by scope and key."""
        return dict(await link.call("memory.list", scope=scope, prefix=prefix or None, pinned=pinned))

    @server.tool(annotations=WRITES)
    async def note(
        kind: Annotated[
            NoteKind,
            # Inline in the schema, as the agent reads it best (an enum type alone is a $ref).
            WithJsonSchema({"enum": list(choices_of(NoteKind)), "title": "Kind", "type": "string"}),
            Field(description="What it is: a decision, a rejected alternative, an assumption, a to-do, an error..."),
        ],
        text: Annotated[str, Field(min_length=1, description="The note itself, one or two sentences.")],
        reason: Annotated[str | None, Field(description="Why (for decisions and rejected alternatives).")] = None,
        session: SessionParam = None,
    ) -> dict[str, Any]:
        """Record a decision, rejected alternative, assumption, constraint, to-do or error for the next handoff."""
        require(bool(text.strip()), "argument 'text' is empty")
        target = await link.session(session)
        return dict(await link.call("notes.add", target=target, kind=kind, text=text, reason=reason))

    @server.tool(annotations=READ_ONLY)
    async def context(
        session: SessionParam = None,
        budget: Annotated[
            int, Field(ge=1000, le=10_000_000, description="Token budget the context must fit in.")
        ] = 100_000,
    ) -> dict[str, Any]:
        """The session's working context (pinned items, summaries, latest events) in a budget, secrets redacted."""
        return dict(await link.call("context", session=await link.session(session), budget=budget))

    @server.tool(annotations=WRITES)
    async def handoff(
        action: Annotated[
            Literal["show", "create"],
            Field(description="show: the latest stored handoff of the session; create: build one from the log now."),
        ] = "show",
        session: SessionParam = None,
        reason: Annotated[str | None, Field(description="Why the handoff is made (create only).")] = None,
    ) -> dict[str, Any]:
        """Create or show the current agent's handoff document (markdown, continuation prompt and structured fields)."""
        current = await link.session(session)
        if action == "create":
            return dict(await link.call("handoffs.create", target=current, reason=reason))
        mine = (await link.call("handoffs.list", agent=current))["handoffs"]
        require(bool(mine), f"session {current} has no handoff yet", 'call handoff with action "create"')
        return dict(await link.call("handoffs.get", id=mine[-1]["id"]))

    @server.tool(annotations=READ_ONLY)
    async def usage(session: SessionParam = None) -> dict[str, Any]:
        """Context fill, headroom and cost of the session: how much room is left before a handoff."""
        return dict(await link.call("usage", session=await link.session(session)))
