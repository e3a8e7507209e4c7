"""Installing toka's hooks into Claude Code's settings.json, and taking them out again.

Claude Code reads hooks from ``~/.claude/settings.json`` (user) or ``<project>/.claude/settings.json``
(docs/agent-formats.md section 2.1): ``{"hooks": {"<Event>": [{"matcher": ..., "hooks": [{"type":
"command", "command": ...}]}]}}``. Toka adds one group per event running ``toka hook claude-code``
and leaves every other setting and hook as it was, in the same order. Its own entries are
recognised by their command (``toka`` or a path ending in ``/toka``, then ``hook claude-code``),
so installing twice adds nothing and uninstalling removes exactly those.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from store.errors import ConfigError

# The events of docs/agent-formats.md's 2025 list, which every Claude Code version since sends.
EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Notification",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
)
# Tool events match on the tool name; "*" is every tool. Other events match everything when the
# matcher is left out.
TOOL_EVENTS = ("PreToolUse", "PostToolUse")


def settings_path(project: Path | None) -> Path:
    """The project's .claude/settings.json, or the user's ~/.claude/settings.json."""
    if project is not None:
        return project.expanduser().absolute() / ".claude" / "settings.json"
    return Path.home() / ".claude" / "settings.json"


def hook_command() -> str:
    """``toka hook claude-code``, with this toka's full path when `toka` on PATH is another one."""
    here = Path(sys.executable).parent / "toka"
    on_path = shutil.which("toka")
    if here.exists() and not (on_path and os.path.samefile(on_path, here)):
        return f"{shlex.quote(str(here))} hook claude-code"
    return "toka hook claude-code"


def is_toka_hook(handler: Any) -> bool:
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    try:
        words = shlex.split(handler["command"])
    except ValueError:
        return False
    return len(words) >= 3 and Path(words[0]).name == "toka" and words[1:3] == ["hook", "claude-code"]


@dataclass
class Change:
    path: Path
    action: str  # "install" or "uninstall"
    command: str
    events: list[str] = field(default_factory=list)  # events whose toka hook was added / removed
    settings: dict[str, Any] = field(default_factory=dict)  # the settings after the change

    @property
    def changed(self) -> bool:
        return bool(self.events)


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        settings = json.loads(text)
    except ValueError as exc:
        raise ConfigError(
            f"{path} is not valid JSON ({exc}); left untouched", "fix the file (or move it away), then rerun"
        ) from None
    if not isinstance(settings, dict):
        raise ConfigError(f"{path} holds a JSON {type(settings).__name__}, not an object; left untouched")
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict) or not all(isinstance(groups, list) for groups in hooks.values()):
        raise ConfigError(f"{path}: 'hooks' is not an object of lists; left untouched", "see Claude Code's hook docs")
    return settings


def plan(path: Path, *, uninstall: bool = False) -> Change:
    """What installing (or uninstalling) would change, without writing anything."""
    settings = _load(path)
    change = Change(path, "uninstall" if uninstall else "install", hook_command(), settings=settings)
    hooks: dict[str, list[Any]] = settings.get("hooks", {})
    if uninstall:
        for event in list(hooks):
            groups = hooks[event]
            kept = []
            for group in groups:
                inner = group.get("hooks") if isinstance(group, dict) else None
                if not isinstance(inner, list) or not any(is_toka_hook(h) for h in inner):
                    kept.append(group)
                    continue
                change.events.append(event)
                rest = [h for h in inner if not is_toka_hook(h)]
                if rest:
                    kept.append({**group, "hooks": rest})
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
        change.events = list(dict.fromkeys(change.events))
        if change.events and not hooks:
            del settings["hooks"]
        return change
    for event in EVENTS:
        groups = hooks.get(event, [])
        if any(is_toka_hook(h) for g in groups if isinstance(g, dict) for h in g.get("hooks") or []):
            continue
        added: dict[str, Any] = {"matcher": "*"} if event in TOOL_EVENTS else {}
        added["hooks"] = [{"type": "command", "command": change.command}]
        hooks[event] = [*groups, added]
        change.events.append(event)
    if change.events:
        settings["hooks"] = hooks
    return change


def apply(change: Change) -> Path | None:
    """Write the changed settings atomically, after a backup of the old file; the backup's path."""
    path = change.path
    backup = None
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        backup = path.with_name(f"{path.name}.bak-{stamp}")
        shutil.copy2(path, backup)
    text = json.dumps(change.settings, indent=2, ensure_ascii=False) + "\n"
    fd, temp = tempfile.mkstemp(prefix=".settings.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        if backup is not None:
            shutil.copymode(backup, temp)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return backup
