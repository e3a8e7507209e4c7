"""Claude Code session transcripts (``~/.claude/projects/**/*.jsonl``) as toka events.

The parser reads one file line by line and yields events in the shape ``events.append`` takes
(``session``, ``agent``, ``kind``, ``ts``, ``key``, ``payload``). It holds bounded state only (the
response whose usage is being gathered, a window of recently emitted responses, the events of a
file that has not yet named its session), so a 700 MB transcript costs no more memory than a
small one. Nobody publishes a schema for these files and Claude Code changes them often
(shared/docs/agent-formats.md, section 1), so no field is assumed to exist: a record that cannot
be mapped is kept whole as a ``raw`` event, and a line that is not a JSON object is reported as a
``BadLine`` while parsing carries on.

Mapping (``rid`` is the record's ``uuid``, or ``<agent>@<line>#<digest of the line>`` without one):

- session: the record's ``sessionId``; else the last one seen in the file; else, for lines
  before the first ``sessionId``, the first one that follows; else the file stem (the
  ``<session>`` folder for ``<session>/subagents/agent-*.jsonl``). Subagent files carry the
  parent's ``sessionId``, so their events land in the parent session under their own agent.
- agent: ``"main"`` for the main chain; for ``isSidechain`` records and for records in
  ``agent-*.jsonl`` files, the ``agentId`` (else the id in the file name). Inline 1.0.x
  sidechains have neither: each Task call's sidechain starts with a record whose
  ``parentUuid`` is null and goes on by ``parentUuid``, so each becomes an agent of its own,
  ``sidechain-<first 8 of its first record's uuid>``, and a record joins its parent's.
- ts: the record's ``timestamp`` when it is a valid ISO-8601 time, else the one it holds
  (``snapshot.timestamp`` of a file-history snapshot), else the previous record's; records
  before the file's first time take that first time (the next record's). Only a file with no
  time at all falls back to its modification time.
- ``user`` / ``assistant`` records, per content block ``i`` (key ``{rid}:{i}``):
  ``text`` → ``message`` {role, text}; a plain-string user content → ``message`` {role, text};
  ``thinking`` → ``thinking`` {text, signature?, hidden: true when the text was withheld};
  ``redacted_thinking`` → ``thinking`` {text: "", redacted: true};
  ``tool_use`` / ``server_tool_use`` → ``tool.call`` {tool, tool_use_id, input};
  ``tool_result`` → ``tool.result`` {tool_use_id, output (text blocks joined), is_error};
  any other block (images, ...) → ``block`` {role, type, block}.
  User messages flagged ``isMeta`` carry ``meta: true``.
- a user record with ``isCompactSummary`` → ``compaction.summary`` {summary, boundary (the
  boundary record's uuid)}, key ``{rid}:0``: the summary the compaction left, which follows the
  compaction's boundary. In 1.0.x, which writes no boundary record, the summary is the only
  record of the compaction: ``compaction`` {summary, boundary: null}. One compaction is one
  ``compaction`` event either way.
- ``system`` with subtype ``compact_boundary`` → ``compaction`` {trigger, pre_tokens,
  logical_parent}; other ``system`` records → ``system`` {subtype, content, level, detail (the
  record's other, non-envelope fields)}; key ``{rid}:0``.
- ``summary`` → ``session.title`` {title, leaf}, key ``title:{leafUuid}``.
- the first record of each session in a file that has ``cwd``, ``gitBranch`` or ``version`` →
  ``session.meta`` {source: "claude-code", cwd, git_branch, version}, key ``meta:{rid}``.
- assistant ``message.usage`` → one ``usage`` event per response (``message.id`` + ``requestId``)
  with the largest ``output_tokens`` among the records Claude Code writes for it (one per content
  block): {model, input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens,
  context_tokens (input + cache creation + cache read: the prompt's size), message_id,
  request_id, sidechain, cache_creation_1h_tokens (the cache writes kept for an hour, which
  cost more) when the record says which, and speed (``fast`` for a call served in fast mode,
  billed at a premium) when it has one}, key ``usage:{message_id}:{request_id}``. Model ``<synthetic>`` and
  ``isApiErrorMessage`` records count no usage. The records of one response are consecutive per
  agent, so the response is held until that agent starts another one, a compaction comes, or the
  parser is flushed (at the end of the file, or of what a growing file holds so far). A record of
  a response already emitted that reports more output (the response was still being written
  when the parser was flushed) adds a revision: {model, output_tokens (the increase),
  context_tokens (the response's prompt, which prices its output), message_id, request_id,
  sidechain, revision: true}, key ``usage:{message_id}:{request_id}:+{output}``, which adds to
  the output count and to nothing else.
- every other record type (``progress``, ``attachment``, ``file-history-snapshot``, ...) →
  ``raw`` {type, record}, key ``raw:{rid}``, counted in ``ParseStats.unknown_types``.

Keys come from the source's own ids and never from the file name, so importing a file twice,
or history that a 1.0.x resume copied into another file under the same uuids, yields the same
keys, and the store answers with the events it already has (keys are unique per session).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon.contract.kinds import Kind
from daemon.ingest.claude_code_payloads import (
    block_payload,
    boundary_payload,
    content_text,
    has_meta,
    message_payload,
    meta_payload,
    record_time,
    system_payload,
    token_count,
    usage_payload,
)
from daemon.ingest.lines import ParseStats
from daemon.ingest.parser import NewEventDict, State, parse_whole
from store.events import digest, fit_name, format_ts

# Events held back while a file has not yet named its session (1.0.x files open with up to a few
# dozen ``summary`` lines); past this many they go to the fallback session.
PENDING_LIMIT = 1000
# Responses whose usage was emitted, remembered so that a late repeat is not counted twice;
# a snapshot keeps the latest few (a flushed response may go on in the next records).
RECENT_RESPONSES = 4096
SNAPSHOT_RESPONSES = 64
# Agents with a response in flight at once (parallel inline sidechains in 1.0.x).
OPEN_RESPONSES = 64
# Inline sidechain records remembered by uuid, so that each record finds its parent's agent.
SIDECHAIN_RECORDS = 4096
SNAPSHOT_SIDECHAIN_RECORDS = 256
# Ids and names longer than this are not ids: the record is treated as having none.
MAX_ID_CHARS = 200
SYNTHETIC_MODEL = "<synthetic>"


@dataclass
class _Response:
    """The usage of the response an agent is in the middle of, as its event."""

    id: tuple[str, str]
    event: NewEventDict


def parse_claude_code(path: Path, stats: ParseStats) -> Iterator[NewEventDict]:
    """The events of one Claude Code transcript file, in file order; ``stats`` is updated."""
    return parse_whole(ClaudeCodeParser, path, stats)


class ClaudeCodeParser:
    """The state of one file's parse: bounded whatever the file's size (see daemon.ingest.parser)."""

    def __init__(self, path: Path, stats: ParseStats, state: State | None = None) -> None:
        self.path = path
        self.stats = stats
        self.file_agent = (
            fit_name(path.stem.removeprefix("agent-"), MAX_ID_CHARS) if path.name.startswith("agent-") else None
        )
        subagents = path.parent.name == "subagents" and path.name.startswith("agent-")
        self.fallback_session = (
            (fit_name(path.parent.parent.name, MAX_ID_CHARS) if subagents else None)
            or fit_name(path.stem, MAX_ID_CHARS)
            or "-"
        )
        self.session: str | None = None
        self.pending: list[NewEventDict] = []
        self.meta_sessions: set[str] = set()
        self.open: OrderedDict[str, _Response] = OrderedDict()
        self.emitted: OrderedDict[tuple[str, str], int] = OrderedDict()  # response -> output counted
        # Records without a timestamp (summaries, modes, titles) take the one before them; those
        # before the file's first time take that first time, so they wait for it in `pending`.
        self.first_ts: str | None = None
        self.last_ts: str | None = None
        # Inline sidechain records' agents by uuid, and the agent of the latest one.
        self.sidechains: OrderedDict[str, str] = OrderedDict()
        self.last_sidechain: str | None = None
        if state is not None:
            self.session = state.get("session")
            self.meta_sessions = set(state.get("meta_sessions", ()))
            self.first_ts = state.get("first_ts", state.get("last_ts"))
            self.last_ts = state.get("last_ts")
            self.emitted.update(((mid, rid), output) for mid, rid, output in state.get("emitted", ()))
            self.pending = list(state.get("pending", ()))
            self.sidechains.update(state.get("sidechains", ()))
            self.last_sidechain = state.get("last_sidechain")

    def feed(self, number: int, raw: bytes, record: dict[str, Any]) -> Iterator[NewEventDict]:
        session = fit_name(record.get("sessionId"), MAX_ID_CHARS)
        if session is not None:
            self.session = session
        yield from self._settle(self._record(number, raw, record, session or self.session))

    def flush(self, end: bool = True) -> Iterator[NewEventDict]:
        """The responses held open; at the ``end``, the events still waiting for the file to
        name their session (they take the fallback session) or to give a time (a file with no
        time at all: its modification time). A later ``sessionId`` is still taken up."""
        yield from self._settle(self._close_responses())
        if end and self.pending:
            self.session = self.session or self.fallback_session
            self.first_ts = self.first_ts or _mtime(self.path)
            yield from self._release()

    def snapshot(self) -> State:
        recent = list(self.emitted.items())[-SNAPSHOT_RESPONSES:]
        return {
            "session": self.session,
            "meta_sessions": sorted(self.meta_sessions),
            "first_ts": self.first_ts,
            "last_ts": self.last_ts,
            "emitted": [[mid, rid, output] for (mid, rid), output in recent],
            "pending": self.pending,
            "sidechains": list(self.sidechains.items())[-SNAPSHOT_SIDECHAIN_RECORDS:],
            "last_sidechain": self.last_sidechain,
        }

    def _settle(self, events: list[NewEventDict]) -> Iterator[NewEventDict]:
        """Yield events once the file has named its session and given its first time, in file
        order; hold them until then (at most PENDING_LIMIT, then the fallbacks are taken)."""
        if not self.pending and self.session is not None and self.first_ts is not None:
            for event in events:
                if event["session"] is None:
                    event["session"] = self.session  # a held response that ended after the session was named
                yield self._counted(event)
            return
        self.pending.extend(events)
        if self.session is None or self.first_ts is None:
            if len(self.pending) < PENDING_LIMIT:
                return
            self.session = self.session or self.fallback_session
            self.first_ts = self.first_ts or _mtime(self.path)
        yield from self._release()

    def _counted(self, event: NewEventDict) -> NewEventDict:
        self.stats.events += 1
        return event

    def _release(self) -> Iterator[NewEventDict]:
        for event in self.pending:
            if event["session"] is None:
                event["session"] = self.session
            if event["ts"] is None:
                event["ts"] = self.first_ts
            yield self._counted(event)
        self.pending.clear()

    def _record(self, number: int, raw: bytes, record: dict[str, Any], session: str | None) -> list[NewEventDict]:
        kind = record.get("type")
        agent = self._agent(record)
        rid = fit_name(record.get("uuid"), MAX_ID_CHARS) or f"{agent}@{number}#{digest(raw)[:16]}"
        ts = record_time(record)
        if ts is None:
            ts = self.last_ts  # None before the file's first time: it is given when known
            self.stats.borrowed_timestamps += 1
        else:
            self.last_ts = ts
            self.first_ts = self.first_ts or ts
        events: list[NewEventDict] = []

        def add(kind: str, key: str, payload: dict[str, Any]) -> None:
            events.append({"session": session, "agent": agent, "kind": kind, "ts": ts, "key": key, "payload": payload})

        if session is not None and session not in self.meta_sessions and has_meta(record):
            self.meta_sessions.add(session)
            add(Kind.SESSION_META, f"meta:{rid}", meta_payload(record))
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if kind in ("user", "assistant") and isinstance(content, (str, list)):
            if kind == "user" and record.get("isCompactSummary") is True:
                events[:0] = self._close_responses()
                boundary = record.get("parentUuid")
                summary = {"summary": content_text(content), "boundary": boundary}
                add(Kind.COMPACTION if boundary is None else Kind.COMPACTION_SUMMARY, f"{rid}:0", summary)
            elif isinstance(content, str):
                add(Kind.MESSAGE, f"{rid}:0", message_payload(kind, content, record))
            else:
                if kind == "assistant" and isinstance(message, dict):
                    events[:0] = self._usage(record, message, rid, agent, session, ts)
                for index, block in enumerate(content):
                    block_kind, payload = block_payload(kind, block, record)
                    add(block_kind, f"{rid}:{index}", payload)
        elif kind == "system" and record.get("subtype") == "compact_boundary":
            events[:0] = self._close_responses()
            add(Kind.COMPACTION, f"{rid}:0", boundary_payload(record))
        elif kind == "system":
            add(Kind.SYSTEM, f"{rid}:0", system_payload(record))
        elif kind == "summary":
            leaf = fit_name(record.get("leafUuid"), MAX_ID_CHARS)
            add(
                "session.title",
                f"title:{leaf or digest(raw)[:16]}",
                {"title": record.get("summary"), "leaf": record.get("leafUuid")},
            )
        else:
            type_name = kind if isinstance(kind, str) else repr(kind)
            self.stats.unknown_types[type_name] += 1
            add(Kind.RAW, f"raw:{rid}", {"type": kind, "record": record})
        return events

    def _agent(self, record: dict[str, Any]) -> str:
        if record.get("isSidechain") is not True and self.file_agent is None:
            return "main"
        return fit_name(record.get("agentId"), MAX_ID_CHARS) or self.file_agent or self._inline_sidechain(record)

    def _inline_sidechain(self, record: dict[str, Any]) -> str:
        """The agent of a 1.0.x inline sidechain record: its parent's; a new one for the first
        record of a Task call's sidechain (no parent); the latest one's when the parent is unknown."""
        uuid = fit_name(record.get("uuid"), MAX_ID_CHARS)
        parent = fit_name(record.get("parentUuid"), MAX_ID_CHARS)
        agent = self.sidechains.get(parent) if parent is not None else None
        if agent is None:
            if parent is None or self.last_sidechain is None:
                agent = f"sidechain-{(uuid or digest(json.dumps(record, sort_keys=True).encode()))[:8]}"
            else:
                agent = self.last_sidechain
        if uuid is not None:
            self.sidechains[uuid] = agent
            if len(self.sidechains) > SIDECHAIN_RECORDS:
                self.sidechains.popitem(last=False)
        self.last_sidechain = agent
        return agent

    def _usage(
        self,
        record: dict[str, Any],
        message: dict[str, Any],
        rid: str,
        agent: str,
        session: str | None,
        ts: str | None,
    ) -> list[NewEventDict]:
        """The usage events a record completes: the agent's previous response when this record
        starts a new one. The record's own usage is held until its response is complete."""
        usage = message.get("usage")
        model = message.get("model")
        if not isinstance(usage, dict) or model == SYNTHETIC_MODEL or record.get("isApiErrorMessage") is True:
            return []
        message_id = fit_name(message.get("id"), MAX_ID_CHARS) or f"uuid:{rid}"
        request_id = fit_name(record.get("requestId"), MAX_ID_CHARS) or ""
        response = (message_id, request_id)
        output = token_count(usage, "output_tokens")
        if response in self.emitted:
            self.stats.duplicates_skipped += 1
            counted = self.emitted[response]
            if output <= counted:
                return []
            self.emitted[response] = output
            prompt = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
            revision = {
                "model": model,
                "output_tokens": output - counted,
                "context_tokens": sum(token_count(usage, name) for name in prompt),
                "message_id": message_id,
                "request_id": request_id or None,
                "sidechain": record.get("isSidechain") is True,
                "revision": True,
            }
            if isinstance(usage.get("speed"), str):  # its output is priced as its response's
                revision["speed"] = usage["speed"][:16]
            key = f"usage:{message_id}:{request_id}:+{output}"
            return [{"session": session, "agent": agent, "kind": Kind.USAGE, "ts": ts, "key": key, "payload": revision}]
        current = self.open.get(agent)
        if current is not None and current.id == response:
            self.stats.duplicates_skipped += 1
            if output > current.event["payload"]["output_tokens"]:
                current.event["payload"] = usage_payload(usage, model, response, record)
            return []
        done = [self._emit(self.open.pop(agent))] if current is not None else []
        event = {
            "session": session,
            "agent": agent,
            "kind": Kind.USAGE,
            "ts": ts,
            "key": f"usage:{message_id}:{request_id}",
            "payload": usage_payload(usage, model, response, record),
        }
        self.open[agent] = _Response(response, event)
        if len(self.open) > OPEN_RESPONSES:
            done.append(self._emit(self.open.popitem(last=False)[1]))
        return done

    def _emit(self, response: _Response) -> NewEventDict:
        self.emitted[response.id] = response.event["payload"]["output_tokens"]
        if len(self.emitted) > RECENT_RESPONSES:
            self.emitted.popitem(last=False)
        return response.event

    def _close_responses(self) -> list[NewEventDict]:
        done = [self._emit(r) for r in self.open.values()]
        self.open.clear()
        return done


def _mtime(path: Path) -> str | None:
    try:
        return format_ts(path.stat().st_mtime_ns // 1000)
    except OSError:
        return None
