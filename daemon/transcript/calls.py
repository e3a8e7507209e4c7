"""What a handoff reads from tool calls: the files a call writes, what it was asked to do, the
to-do list it sets.

Files are written by Claude Code's file tools (``Write``, ``Edit``, ``MultiEdit``,
``NotebookEdit``, the path in their input) and by Codex's ``apply_patch``, called as a tool of
its own or run through a shell tool with the patch inline. To-do lists are Claude Code's
``TodoWrite`` (``input.todos``) and Codex's ``update_plan`` (``input.plan``).
"""

from __future__ import annotations

import re
from typing import Any

from daemon.transcript.text import clip, text_of

# Claude Code's file-writing tools and the input field naming the file.
PATH_FIELDS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
WRITE_ACTIONS = {"Write": "created", "Edit": "modified", "MultiEdit": "modified", "NotebookEdit": "modified"}
# Codex tools that run a command, which may be apply_patch with the patch inline.
SHELL_TOOLS = frozenset({"shell", "local_shell", "exec_command", "container.exec"})
TODO_TOOLS = frozenset({"TodoWrite", "update_plan"})
_PATCH_LINE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.MULTILINE)
_PATCH_ACTIONS = {"Add": "created", "Update": "modified", "Delete": "deleted"}
_SUMMARY_FIELDS = ("file_path", "notebook_path", "command", "cmd", "pattern", "path", "url", "description")


def written_files(tool: str, call_input: Any) -> list[tuple[str, str]] | None:
    """(path, action) for each file a call of ``tool`` writes; None for a call that writes none."""
    field_name = PATH_FIELDS.get(tool)
    if field_name is not None:
        path = call_input.get(field_name) if isinstance(call_input, dict) else None
        return [(path, WRITE_ACTIONS[tool])] if isinstance(path, str) and path else None
    if tool == "apply_patch":
        patch = call_input if isinstance(call_input, str) else shell_patch(call_input)
        return patch_paths(patch) if patch else []
    if tool in SHELL_TOOLS:
        patch = shell_patch(call_input)
        if patch is not None:
            return patch_paths(patch)
    return None


def patch_paths(patch: str) -> list[tuple[str, str]]:
    """(path, action) for each file an apply_patch text touches; a moved file counts as the
    old path deleted and the new one created."""
    found: list[tuple[str, str]] = []
    for match in _PATCH_LINE.finditer(patch):
        verb, path, moved = match.groups()
        if moved is not None:
            if found:
                found[-1] = (found[-1][0], "deleted")
            found.append((moved, "created"))
        else:
            found.append((path, _PATCH_ACTIONS[verb]))
    return found


def shell_patch(call_input: Any) -> str | None:
    """The patch text of a shell call that runs apply_patch, if it is one."""
    command = call_input.get("command", call_input.get("cmd")) if isinstance(call_input, dict) else call_input
    if isinstance(command, list):
        command = "\n".join(c for c in command if isinstance(c, str))
    if isinstance(command, str) and "*** Begin Patch" in command and "apply_patch" in command:
        return command
    return None


def call_summary(call_input: Any) -> str:
    """One line saying what a call was asked to do."""
    if isinstance(call_input, dict):
        for name in _SUMMARY_FIELDS:
            value = call_input.get(name)
            if value:
                return clip(text_of(value) if not isinstance(value, list) else " ".join(map(str, value)), 160)
        return ""
    if isinstance(call_input, str):
        return clip(call_input.split("\n", 1)[0], 160)
    return ""


def todo_items(tool: str, call_input: Any) -> list[Any] | None:
    """The raw items of a to-do call's list; None when its arguments did not parse, or were redacted."""
    items = call_input.get("todos" if tool == "TodoWrite" else "plan") if isinstance(call_input, dict) else None
    return items if isinstance(items, list) else None
