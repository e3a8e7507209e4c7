"""What each Codex rollout item becomes: the payloads of its events, one item at a time.

Plain functions of a line's payload, with no state: the parser (daemon/ingest/codex.py, whose
docstring has the table of the mapping) picks the kind and the key, and keeps what carries over
from line to line (the session, the model, the last usage).
"""

from __future__ import annotations

import json
import re
from typing import Any

# How tool output reports a failed command, in the formats Codex has used.
_EXIT_CODE = re.compile(r"^(?:Process exited with code|Exit code:) (-?\d+)\s*$", re.MULTILINE)
# Where to look for an exit code in tool output that has no "Output:" line.
_HEADER_CHARS = 512
_TEXT_PARTS = frozenset({"input_text", "output_text", "text", "summary_text", "reasoning_text"})


def session_meta_payload(meta: dict[str, Any]) -> dict[str, Any]:
    """The whole meta, with ``source: "codex"``; Codex's own ``source`` kept as ``codex_source``."""
    payload = {key: value for key, value in meta.items() if key != "source"}
    payload["source"] = "codex"
    if "source" in meta:
        payload["codex_source"] = meta["source"]
    return payload


def compaction_payload(compacted: dict[str, Any]) -> dict[str, Any]:
    """The summary of a ``compacted`` line, how many items replaced the history, its window ids."""
    history = compacted.get("replacement_history")
    payload: dict[str, Any] = {
        "summary": compacted.get("message"),
        "replacement_items": len(history) if isinstance(history, list) else None,
    }
    for name in ("window_id", "window_number", "previous_window_id", "first_window_id"):
        if name in compacted:
            payload[name] = compacted[name]
    return payload


def message_payload(item: dict[str, Any]) -> dict[str, Any]:
    """A message item: role, its text parts joined, phase and id when present, how many images."""
    message: dict[str, Any] = {"role": item.get("role"), "text": "\n".join(_texts(item.get("content")))}
    for name in ("phase", "id"):
        if name in item:
            message[name] = item[name]
    content = item.get("content")
    parts = content if isinstance(content, list) else []
    images = sum(1 for part in parts if isinstance(part, dict) and "image" in str(part.get("type")))
    if images:
        message["images"] = images
    return message


def reasoning_payload(item: dict[str, Any]) -> dict[str, Any]:
    """A reasoning item: its summary and content texts; whether it was encrypted, not the opaque text."""
    summary = _texts(item.get("summary"))
    return {
        "text": "\n".join(summary + _texts(item.get("content"))),
        "summary": summary,
        "encrypted": bool(item.get("encrypted_content")),
    }


def tool_result_payload(item: dict[str, Any]) -> dict[str, Any]:
    """A call's output as recorded, and ``is_error`` when the output says."""
    output = item.get("output") if "output" in item else item.get("tools")
    result: dict[str, Any] = {"call_id": item.get("call_id"), "output": output}
    is_error = _is_error(output)
    if is_error is not None:
        result["is_error"] = is_error
    return result


def _texts(parts: Any) -> list[str]:
    if isinstance(parts, str):
        return [parts]
    if not isinstance(parts, list):
        return []
    return [
        part["text"]
        for part in parts
        if isinstance(part, dict) and part.get("type") in _TEXT_PARTS and isinstance(part.get("text"), str)
    ]


def tool_call_payload(item: dict[str, Any]) -> dict[str, Any]:
    """A call item of any type as one ``tool.call`` shape: tool, call_id, input (and status)."""
    item_type = item.get("type")
    call: dict[str, Any]
    if item_type == "function_call":
        arguments = item.get("arguments")
        try:
            parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            parsed = arguments
        call = {"tool": item.get("name"), "call_id": item.get("call_id"), "input": parsed}
        if item.get("namespace") is not None:
            call["namespace"] = item["namespace"]
        return call
    if item_type == "custom_tool_call":
        call = {"tool": item.get("name"), "call_id": item.get("call_id"), "input": item.get("input")}
    elif item_type == "local_shell_call":
        call = {"tool": "local_shell", "call_id": item.get("call_id") or item.get("id"), "input": item.get("action")}
    elif item_type == "web_search_call":
        call = {"tool": "web_search", "call_id": item.get("id"), "input": item.get("action")}
    else:
        call = {"tool": "tool_search", "call_id": item.get("call_id"), "input": item.get("arguments")}
    if "status" in item:
        call["status"] = item["status"]
    return call


def _is_error(output: Any) -> bool | None:
    """Whether a tool's output reports failure, when it says; None when it does not."""
    if isinstance(output, dict) and isinstance(output.get("success"), bool):
        return not output["success"]
    if not isinstance(output, str):
        return None
    if output.startswith("{"):
        try:
            parsed = json.loads(output)
        except ValueError:
            parsed = None
        metadata = parsed.get("metadata") if isinstance(parsed, dict) else None
        if isinstance(metadata, dict) and is_count(metadata.get("exit_code"), signed=True):
            return bool(metadata["exit_code"] != 0)
    # Only the header Codex writes above the command's own output: the output may quote anything.
    end = output.find("Output:")
    match = _EXIT_CODE.search(output[: end if end >= 0 else _HEADER_CHARS])
    return int(match.group(1)) != 0 if match else None


def is_count(value: Any, *, signed: bool = False) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and (signed or value >= 0)


def context_window(value: Any) -> int | None:
    """A context window size, or None for a missing, zero or odd one."""
    return value if is_count(value) and value > 0 else None
