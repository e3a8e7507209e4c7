"""Installing toka's hooks (and its status line) into Claude Code's settings.json, and taking them
out again.

Claude Code reads hooks from ``~/.claude/settings.json`` (user) or ``<project>/.claude/settings.json``
(docs/agent-formats.md section 2.1): ``{"hooks": {"<Event>": [{"matcher": ..., "hooks": [{"type":
"command", "command": ...}]}]}}``. Toka adds one group per event running ``toka hook claude-code``
by its absolute path (``/venv/bin/toka hook claude-code``: Claude Code runs hooks with the
environment it was started from, where the venv may not be on PATH), and leaves every other
setting and hook as it was, in the same order. Its own entries are recognised by their command
(``toka`` or a path ending in ``/toka``, then ``hook claude-code``), so installing twice adds
nothing, installing from another toka (or over an older bare ``toka``) updates their command in
place, and uninstalling removes exactly those. Toka's status line (``"statusLine": {"type":
"command", "command": "/venv/bin/toka statusline"}``) is added when asked for and when no other
status line is set, and removed by an uninstall.

Claude Code waits for a command hook to exit before it goes on, so each of toka's hooks used to
cost the agent a Python start-up (about 25 ms; a turn of five tool calls runs 14 hooks). Only the
events whose answer is context for the model (:data:`ANSWERING`) need toka's hook. The others only
record, and toka installs them as a few words of shell that drop the payload into the daemon's
inbox (toka_cli/integrate/inbox.py): a shell and ``cat``, which Claude Code waits for about as
long as for ``/bin/true``, and which is done when Claude Code goes on, so nothing outlives it.
The daemon ingests the inbox live, and at its next start what hooks left while it was down.
Claude Code's own ``"async": true`` is not used: 2.1.332 kills every async hook still running
when ``claude -p`` ends (the Stop hook's, at times the last tool's), which loses their events
and holds the exit up to 1.5 s (docs/hooks.md). A toka entry of before (the hook on every event,
waited for, in the background form or ``async``) is converted in place. ``--no-inbox`` installs
toka's hook on every event, waited for (where there is no POSIX shell).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from store.errors import ConfigError
from toka_cli.integrate.executable import command_words, is_toka, toka_command
from toka_cli.integrate.inbox import inbox_command, is_inbox_command

if TYPE_CHECKING:
    from toka_cli.integrate.otel import Telemetry

# The events of docs/agent-formats.md's 2025 list, which every Claude Code version since sends,
# and PostCompact, which 2.1.332 sends after a compaction (an older version ignores the entry).
EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Notification",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
)
# The events whose hook may answer with context for the model (toka_cli/hook.py, ANSWERED):
# Claude Code must wait for them. Every other event's hook drops its payload into the daemon's inbox.
ANSWERING = ("SessionStart", "UserPromptSubmit", "PreCompact")
# What the background form (installed by toka before the inbox) wraps a command in: the payload
# stays readable as fd 3 (an asynchronous list's stdin is /dev/null), its output goes nowhere
# (Claude Code would read it until the last holder closes it), and the shell exits at once.
_BACKGROUND = re.compile(r"exec 3<&0; \{ (?P<command>.+) <&3 >/dev/null 2>&1 & \}")
# The agent whose payloads toka's inbox command drops.
AGENT = "claude-code"
# Tool events match on the tool name; "*" is every tool. Other events match everything when the
# matcher is left out.
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
# The options of `toka hook claude-code` an entry keeps when it is updated.
HOOK_OPTIONS = ("--headroom",)
# What toka's status line was before `toka statusline`: the hook's own flag.
HOOK_STATUSLINE = ["hook", "claude-code", "--statusline"]


def settings_path(project: Path | None) -> Path:
    """The project's .claude/settings.json, or the user's ~/.claude/settings.json."""
    if project is not None:
        return project.expanduser().absolute() / ".claude" / "settings.json"
    return Path.home() / ".claude" / "settings.json"


def hook_command() -> str:
    """``/venv/bin/toka hook claude-code``: this toka, by its absolute path."""
    return toka_command("hook", "claude-code")


def background(command: str) -> str:
    """``command`` in the background form: the shell starts it in the background, reading the
    hook's stdin, and exits (what toka installed on the recording events before the inbox)."""
    return f"exec 3<&0; {{ {command} <&3 >/dev/null 2>&1 & }}"


def event_command(event: str, command: str, inbox: bool = True) -> str:
    """What toka's hook of ``event`` runs: ``command`` when the event answers (or ``inbox`` is
    false), else the shell command that drops the payload into the daemon's inbox."""
    return command if event in ANSWERING or not inbox else inbox_command(AGENT)


def event_commands(command: str, inbox: bool = True) -> dict[str, str]:
    """What toka's hook of each event it installs runs."""
    return {event: event_command(event, command, inbox) for event in EVENTS}


def unwrapped(command: str) -> str:
    """The command a hook runs, out of the background form if it is in it."""
    found = _BACKGROUND.fullmatch(command.strip())
    return found["command"] if found else command


def _command_words(handler: Any) -> list[str] | None:
    """The words of a handler's command, out of the background form; None when it has none."""
    return command_words(handler, unwrapped)


def statusline_command() -> str:
    return toka_command("statusline")


def is_toka_statusline(setting: Any) -> TypeGuard[dict[str, Any]]:
    """``toka statusline``, or the older ``toka hook claude-code --statusline``."""
    words = command_words(setting)
    return words is not None and bool(words) and is_toka(words[0]) and words[1:] in (["statusline"], HOOK_STATUSLINE)


def is_toka_hook(handler: Any) -> TypeGuard[dict[str, Any]]:
    """``toka hook claude-code ...`` (bare, or by any path), as it is or in the background form,
    or toka's inbox command."""
    if isinstance(handler, dict) and is_inbox_command(handler.get("command"), AGENT):
        return True
    words = _command_words(handler)
    return words is not None and len(words) >= 3 and is_toka(words[0]) and words[1:3] == ["hook", "claude-code"]


def is_inbox_hook(handler: Any) -> bool:
    """Whether ``handler`` is toka's inbox command (which runs no toka)."""
    return isinstance(handler, dict) and is_inbox_command(handler.get("command"), AGENT)


def wanted_handler(event: str, handler: dict[str, Any], command: str, inbox: bool = True) -> dict[str, Any]:
    """Toka's ``handler`` of ``event`` as this toka installs it: ``command`` (with ``--headroom``
    if the handler gave it) or the inbox command, as the event wants, never ``async``; its other
    keys (a ``timeout``) kept. Anything else after ``hook claude-code`` goes: the hook would take
    it for an argument."""
    words = [] if is_inbox_hook(handler) else _command_words(handler) or []
    options = [word for word in words[3:] if word in HOOK_OPTIONS]
    wanted = {key: value for key, value in handler.items() if key != "async"}
    wanted["command"] = event_command(event, shlex.join([*shlex.split(command), *options]), inbox)
    return wanted


@dataclass
class Change:
    path: Path
    action: str  # "install" or "uninstall"
    command: str
    events: list[str] = field(default_factory=list)  # events whose toka hook was added / removed
    # Events whose toka hook now runs this toka or the inbox command, as the event wants (it ran
    # another toka, a bare `toka`, or a recording event's hook in the background form, waited for
    # or with "async" before).
    updated: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)  # the settings after the change
    # Claude Code's statusLine: "added", "updated" (toka's, now by this toka's path) or "removed"
    # (by this change), "installed" (toka's, as it was), "other" (another command's, left as it
    # is) or "absent".
    statusline: str = "absent"
    # The telemetry env block (toka_cli/integrate/otel.py): its state, None when not asked for.
    otel: str | None = None

    @property
    def changed(self) -> bool:
        touched = ("added", "updated", "removed")
        return bool(self.events or self.updated) or self.statusline in touched or self.otel in touched


def load(path: Path) -> dict[str, Any]:
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


def plan(
    path: Path,
    *,
    uninstall: bool = False,
    statusline: bool = False,
    otel: Telemetry | None = None,
    inbox: bool = True,
) -> Change:
    """What installing (or uninstalling) would change, without writing anything; with
    ``statusline``, toka's status line too (it never replaces another command's); with ``otel``
    (the receiver's base URL and token), the telemetry env block; with ``inbox`` false, toka's
    hook on every event."""
    settings = load(path)
    change = Change(path, "uninstall" if uninstall else "install", hook_command(), settings=settings)
    if otel is not None:
        from toka_cli.integrate.otel import plan_claude_env

        change.otel = plan_claude_env(settings, otel, uninstall)
    current = settings.get("statusLine")
    change.statusline = "installed" if is_toka_statusline(current) else "other" if current else "absent"
    if uninstall and change.statusline == "installed":
        del settings["statusLine"]
        change.statusline = "removed"
    elif not uninstall and is_toka_statusline(current) and current["command"] != statusline_command():
        settings["statusLine"] = {**current, "command": statusline_command()}
        change.statusline = "updated"
    elif statusline and change.statusline == "absent":
        settings["statusLine"] = {"type": "command", "command": statusline_command()}
        change.statusline = "added"
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
            settings.pop("hooks", None)
        return change
    for event in EVENTS:
        groups = hooks.get(event, [])
        found = False
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                continue
            for index, handler in enumerate(inner):
                if not is_toka_hook(handler):
                    continue
                found = True
                wanted = wanted_handler(event, handler, change.command, inbox)
                if wanted != handler:  # another toka's path, a bare `toka`, or a form of before
                    inner[index] = wanted
                    change.updated.append(event)
        if found:
            continue
        added: dict[str, Any] = {"matcher": "*"} if event in TOOL_EVENTS else {}
        added["hooks"] = [{"type": "command", "command": event_command(event, change.command, inbox)}]
        hooks[event] = [*groups, added]
        change.events.append(event)
    change.updated = list(dict.fromkeys(change.updated))
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
