"""OpenAI Codex CLI rollout files (``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``) as toka events.

A rollout is JSON lines, append-only; each modern line is an envelope ``{"timestamp", "type",
"payload"}`` (shared/docs/agent-formats.md, section 3). ``parse_codex`` reads it line by line as
bytes and yields event dicts in the shape ``events.append`` takes, holding no more than one line
and a little running state (the session, the latest model and window, the last usage totals, the
tool-call ids already used as keys), so any size of file parses in flat memory.

Mapping (session = the first line's ``session_meta.payload.id``; failing that, the uuid in the file
name; failing that, the file name; agent is always ``"main"``; ts is the line's ``timestamp``):

=========================================  ==============  =============================================
rollout line                               kind            payload
=========================================  ==============  =============================================
session_meta                               session.meta    the whole meta, with ``source: "codex"`` and
                                                           Codex's own ``source`` (cli, exec, vscode, or
                                                           a subagent object) kept as ``codex_source``
turn_context                               turn.context    the whole turn context (model, cwd,
                                                           approval_policy, sandbox_policy, effort, ...)
response_item message                      message         role, text (the text parts joined), phase and
                                                           id when present, images (how many) when any
response_item reasoning                    thinking        text (summary and content texts joined),
                                                           summary (list), encrypted (bool); the opaque
                                                           encrypted_content itself is not kept
response_item function_call                tool.call       tool, call_id, input (the arguments parsed as
                                                           JSON when they parse, else the string),
                                                           namespace when present
response_item custom_tool_call             tool.call       tool (e.g. apply_patch), call_id, input (the
                                                           free-form string), status
response_item local_shell_call             tool.call       tool "local_shell", call_id, input (action),
                                                           status
response_item web_search_call              tool.call       tool "web_search", call_id (id), input
                                                           (action), status
response_item tool_search_call             tool.call       tool "tool_search", call_id, input (arguments)
response_item function_call_output,        tool.result     call_id, output (as recorded), is_error when
  custom_tool_call_output,                                 the output says: ``success`` false, a
  tool_search_output                                       ``metadata.exit_code`` or a "Process exited
                                                           with code N" / "Exit code: N" line
event_msg token_count                      usage           model (latest turn_context), input_tokens,
                                                           cached_input_tokens, output_tokens,
                                                           reasoning_output_tokens, total_tokens (all of
                                                           ``last_token_usage``: the latest call),
                                                           context_tokens (its total_tokens: the context
                                                           fill), context_window (model_context_window),
                                                           cumulative (``total_token_usage``: billing),
                                                           rate_limits
event_msg (any other type)                 event           the event_msg payload as it is (with ``type``)
compacted                                  compaction      summary (``message``), replacement_items
                                                           (how many), window ids when present
anything else                              raw             ``{"record": <the whole line>}``, counted in
                                                           ``ParseStats.unknown_types``
=========================================  ==============  =============================================

Token counts: Codex's ``input_tokens`` already includes ``cached_input_tokens`` and its
``output_tokens`` includes ``reasoning_output_tokens``; they are kept as Codex reports them.
``token_count`` lines with ``info: null`` (rate limits only) and those whose latest-call input,
cached, output and reasoning counts are all zero (the line Codex writes around a compaction, with
a bogus total) carry no usage and yield nothing (``ParseStats.empty_usage_skipped``); a line that
repeats the cumulative totals of the usage before it is Codex's double emission and is skipped
too (``ParseStats.duplicates_skipped``).

The older rollout format (before about Sep 2025: a first line ``{id, timestamp, instructions,
git}`` without an envelope, then bare response items) is read the same way: the first line as
``session.meta``, bare items as response items.

Keys make a re-import idempotent: a tool call and its result are keyed by their ``call_id``
(``call:<id>``, ``result:<id>``) the first time the id is seen in the file; every other event by
its line: ``L<line number>:<first 12 hex of the line's blake3>``. Rollouts are only ever appended
to, so a line keeps its number, and a grown file yields the same keys for the lines it had plus
new keys for the new lines. A line whose timestamp is missing or unreadable takes the previous
line's (``ParseStats.borrowed_timestamps``). Lines that are not JSON objects (binary, cut off,
not UTF-8) become ``BadLine`` entries and parsing goes on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daemon.contract.kinds import Kind
from daemon.ingest.codex_payloads import (
    compaction_payload,
    context_window,
    is_count,
    message_payload,
    reasoning_payload,
    session_meta_payload,
    tool_call_payload,
    tool_result_payload,
)
from daemon.ingest.lines import ParseStats, unknown_type
from daemon.ingest.parser import State, parse_whole
from store.errors import InvalidEvent
from store.events import MAX_KEY_CHARS, digest, fit_name, format_ts, parse_ts

AGENT = "main"
# The uuid (v7) Codex puts at the end of a rollout's file name; it equals session_meta's id.
_FILE_UUID = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$", re.IGNORECASE)
# Hex digits of the line digest in a line key: enough that an edited line never reuses a key.
_LINE_DIGEST_CHARS = 12
_TOKEN_FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")
# The latest-call counts that are all zero on a token_count that carries no real usage.
_ZERO_CHECK = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")
_CALL_TYPES = frozenset(
    {"function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call"}
)
_RESULT_TYPES = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
_RESPONSE_ITEM_TYPES = _CALL_TYPES | _RESULT_TYPES | {"message", "reasoning"}
# Call keys a snapshot keeps: a call id repeats, if ever, soon after its first use.
SNAPSHOT_CALL_KEYS = 1024


@dataclass
class _State:
    """Running state of one file's parse: small and bounded by the file's distinct call ids."""

    session: str | None = None
    ts: str | None = None
    model: str | None = None
    context_window: int | None = None
    last_cumulative: dict[str, Any] | None = None
    call_keys: dict[str, None] = field(default_factory=dict)  # an ordered set


def parse_codex(path: Path, stats: ParseStats) -> Iterator[dict[str, Any]]:
    """Events of one Codex rollout file, in file order; bad lines go to ``stats.bad_lines``."""
    return parse_whole(CodexParser, path, stats)


class CodexParser:
    """One rollout's parse (see daemon.ingest.parser); nothing is held back, so ``flush``
    gives nothing."""

    def __init__(self, path: Path, stats: ParseStats, state: State | None = None) -> None:
        self.path = path
        self.stats = stats
        self.state = _State()
        if state is not None:
            self.state = _State(**{name: value for name, value in state.items() if name != "call_keys"})
            self.state.call_keys = dict.fromkeys(state.get("call_keys", ()))

    def feed(self, number: int, raw: bytes, record: dict[str, Any]) -> list[dict[str, Any]]:
        state = self.state
        if state.session is None:
            state.session = _session_name(self.path, record)
        ts = _timestamp(state, record, self.stats)
        mapped = _map(state, record, self.stats)
        if mapped is None:
            return []
        kind, payload, key = mapped
        self.stats.events += 1
        event = {
            "session": state.session,
            "agent": AGENT,
            "kind": kind,
            "ts": ts,
            "key": key or _line_key(number, raw),
            "payload": payload,
        }
        return [event]

    def flush(self, end: bool = True) -> list[dict[str, Any]]:
        return []

    def snapshot(self) -> State:
        state = self.state
        return {
            "session": state.session,
            "ts": state.ts,
            "model": state.model,
            "context_window": state.context_window,
            "last_cumulative": state.last_cumulative,
            "call_keys": list(state.call_keys)[-SNAPSHOT_CALL_KEYS:],
        }


def _session_name(path: Path, first: dict[str, Any]) -> str:
    meta = first.get("payload") if first.get("type") == "session_meta" else first
    if isinstance(meta, dict) and (first.get("type") == "session_meta" or _is_legacy_meta(first)):
        name = fit_name(meta.get("id"))
        if name is not None:
            return name
    match = _FILE_UUID.search(path.name)
    if match:
        return match.group(1).lower()
    return fit_name(path.stem) or "codex"


def _is_legacy_meta(record: dict[str, Any]) -> bool:
    return "type" not in record and "payload" not in record and "id" in record and "instructions" in record


def _timestamp(state: _State, record: dict[str, Any], stats: ParseStats) -> str | None:
    value = record.get("timestamp")
    if isinstance(value, str):
        try:
            state.ts = format_ts(parse_ts(value))
            return state.ts
        except InvalidEvent:
            pass
    stats.borrowed_timestamps += 1
    return state.ts


def _line_key(number: int, raw: bytes) -> str:
    line_digest = digest(raw.rstrip(b"\r\n"))[:_LINE_DIGEST_CHARS]
    return f"L{number}:{line_digest}"


def _call_key(state: _State, prefix: str, call_id: Any) -> str | None:
    """``prefix:call_id`` the first time it is seen in this file; None (use the line) after."""
    key = fit_name(f"{prefix}:{call_id}", MAX_KEY_CHARS) if isinstance(call_id, str) and call_id else None
    if key is None or key in state.call_keys:
        return None
    state.call_keys[key] = None
    return key


def _map(state: _State, record: dict[str, Any], stats: ParseStats) -> tuple[str, dict[str, Any], str | None] | None:
    """(kind, payload, key or None for the line key), or None when the line carries nothing."""
    record_type = record.get("type")
    payload = record.get("payload")
    if _is_legacy_meta(record):
        return Kind.SESSION_META, session_meta_payload(record), None
    if record_type in _RESPONSE_ITEM_TYPES and "payload" not in record:
        record_type, payload = "response_item", record  # the older format: bare response items
    if not isinstance(payload, dict):
        return _raw(record, stats, unknown_type(record))
    if record_type == "session_meta":
        return Kind.SESSION_META, session_meta_payload(payload), None
    if record_type == "turn_context":
        model = payload.get("model")
        if isinstance(model, str) and model:
            state.model = model
        return Kind.TURN_CONTEXT, payload, None
    if record_type == "compacted":
        return Kind.COMPACTION, compaction_payload(payload), None
    if record_type == "response_item":
        return _response_item(state, record, payload, stats)
    if record_type == "event_msg":
        item_type = payload.get("type")
        if item_type == "token_count":
            usage = _usage(state, payload, stats)
            return None if usage is None else ("usage", usage, None)
        if not isinstance(item_type, str):
            return _raw(record, stats, "event_msg/?")
        if item_type == "task_started":
            state.context_window = context_window(payload.get("model_context_window")) or state.context_window
        return Kind.EVENT, payload, None
    return _raw(record, stats, unknown_type(record))


def _raw(record: dict[str, Any], stats: ParseStats, type_name: str) -> tuple[str, dict[str, Any], None]:
    stats.unknown_types[type_name] += 1
    return Kind.RAW, {"record": record}, None


def _response_item(
    state: _State, record: dict[str, Any], item: dict[str, Any], stats: ParseStats
) -> tuple[str, dict[str, Any], str | None]:
    item_type = item.get("type")
    call_id = item.get("call_id")
    if item_type == "message":
        return Kind.MESSAGE, message_payload(item), None
    if item_type == "reasoning":
        return Kind.THINKING, reasoning_payload(item), None
    if item_type in _CALL_TYPES:
        return Kind.TOOL_CALL, tool_call_payload(item), _call_key(state, "call", call_id or item.get("id"))
    if item_type in _RESULT_TYPES:
        return Kind.TOOL_RESULT, tool_result_payload(item), _call_key(state, "result", call_id)
    return _raw(record, stats, f"response_item/{item_type}")


def _usage(state: _State, token_count: dict[str, Any], stats: ParseStats) -> dict[str, Any] | None:
    info = token_count.get("info")
    last = info.get("last_token_usage") if isinstance(info, dict) else None
    if not isinstance(info, dict) or not isinstance(last, dict) or not any(last.get(f) for f in _ZERO_CHECK):
        stats.empty_usage_skipped += 1
        return None
    cumulative = info.get("total_token_usage")
    if isinstance(cumulative, dict) and cumulative == state.last_cumulative:
        stats.duplicates_skipped += 1
        return None
    state.last_cumulative = cumulative if isinstance(cumulative, dict) else None
    counts = {name: value for name, value in last.items() if is_count(value)}
    usage: dict[str, Any] = {"model": state.model, **{name: 0 for name in _TOKEN_FIELDS}, **counts}
    if not is_count(last.get("total_tokens")):
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    usage["context_tokens"] = usage["total_tokens"]
    usage["context_window"] = context_window(info.get("model_context_window")) or state.context_window
    usage["cumulative"] = (
        {name: value for name, value in cumulative.items() if is_count(value)} if isinstance(cumulative, dict) else None
    )
    if token_count.get("rate_limits") is not None:
        usage["rate_limits"] = token_count["rate_limits"]
    return usage
