"""Installing toka's hooks into Codex's ``$CODEX_HOME/hooks.json``, trusted, and taking them out again.

Codex reads hooks from ``hooks.json`` beside its ``config.toml`` (the same shape as Claude Code's:
``{"hooks": {"<Event>": [{"matcher": ..., "hooks": [{"type": "command", "command": ...}]}]}}``),
and runs a hook only once it is trusted: ``config.toml`` holds, per hook, the hash of the
definition the user approved::

    [hooks.state."/home/me/.codex/hooks.json:session_start:0:0"]
    trusted_hash = "sha256:..."

The key is the file's path (``CODEX_HOME`` with its links resolved, ``~/.codex`` as it is),
the event's snake-case label, and the hook's place (its group's index among the event's
groups, its own among the group's hooks). The hash is SHA-256 of the hook's normalised
definition as compact JSON with sorted keys: ``event_name``, ``matcher`` when there is one, and
``hooks`` holding this one hook with ``timeout`` filled in (600 s; SessionEnd's 1 s, held to
1..3) and ``async`` (false). Codex writes exactly this entry when the user trusts a hook in
``/hooks``; an untrusted or changed hook is skipped without a word. Running ``toka integrate
codex`` is the user's approval of toka's hooks, so toka writes the entries Codex would, for its
own hooks only: the user's hooks keep whatever trust they had.

Toka adds one group per event, after the user's groups (so no hook of theirs changes place, and
none of their entries goes stale). The events whose answer is context for the model
(:data:`ANSWERING`) run ``toka hook codex`` by its absolute path; the others only record, and
drop their payload into the daemon's inbox with a few words of shell (toka_cli/integrate/inbox.py),
which spares Codex a Python start on every tool call. Its hooks are recognised by their command
(``toka`` or a path ending in ``/toka``, then ``hook codex``; or toka's inbox command):
installing twice changes nothing, installing from another toka updates the command and its
trust in place, and uninstalling removes exactly toka's hooks and their entries, moving the
entries of the user's hooks that follow to their new places.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from store.errors import ConfigError
from toka_cli.integrate.executable import command_words, is_toka, toka_command
from toka_cli.integrate.inbox import inbox_command, is_inbox_command
from toka_cli.integrate.mcp_servers import write_atomically

# Codex 0.171's hook events, each with the label its trust keys use; PermissionRequest (a hook
# that decides) is left out: toka records, it does not approve.
EVENTS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "PreCompact": "pre_compact",
    "PostCompact": "post_compact",
    "Stop": "stop",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
    "SessionEnd": "session_end",
}
# The other labels Codex knows, for moving the trust of the user's hooks on those events.
OTHER_LABELS = {"PermissionRequest": "permission_request"}
HOOK_ARGS = ["hook", "codex"]
# The events whose hook may answer with context for the model (toka_cli/hook.py, ANSWERED): they
# run toka's hook; every other event's drops its payload into the daemon's inbox.
ANSWERING = ("SessionStart", "UserPromptSubmit", "PreCompact")
# The agent whose payloads toka's inbox command drops.
AGENT = "codex"
# hooks.json's ``hooks``: the groups of each event.
Groups = dict[str, list[dict[str, Any]]]
# A hook's timeout when it sets none, as Codex fills it in before hashing; SessionEnd's is
# short (Codex is exiting) and held to 1..3 s.
DEFAULT_TIMEOUT_S = 600
SESSION_END_TIMEOUT_S = (1, 1, 3)  # default, least, most
# The fields of a command hook the hash covers, besides type and command.
HASHED = ("timeout", "async", "statusMessage")
# Events whose matcher Codex ignores, and leaves out of the hash.
MATCHERLESS = ("UserPromptSubmit", "Stop")


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def hooks_path() -> Path:
    return codex_home() / "hooks.json"


def key_source() -> str:
    """How Codex names hooks.json in its trust keys: CODEX_HOME resolved, the default as it is."""
    if os.environ.get("CODEX_HOME"):
        return str(Path(os.environ["CODEX_HOME"]).resolve() / "hooks.json")
    return str(Path.home() / ".codex" / "hooks.json")


def hook_command() -> str:
    """``/venv/bin/toka hook codex``: this toka, by its absolute path."""
    return toka_command(*HOOK_ARGS)


def event_command(event: str, command: str, inbox: bool = True) -> str:
    """What toka's hook of ``event`` runs: ``command`` when the event answers (or ``inbox`` is
    false), else the shell command that drops the payload into the daemon's inbox."""
    return command if event in ANSWERING or not inbox else inbox_command(AGENT)


def is_toka_hook(handler: Any) -> TypeGuard[dict[str, Any]]:
    if isinstance(handler, dict) and is_inbox_command(handler.get("command"), AGENT):
        return True
    words = command_words(handler)
    return words is not None and len(words) == 3 and is_toka(words[0]) and words[1:] == HOOK_ARGS


def trust_key(source: str, event: str, group: int, index: int) -> str:
    return f"{source}:{EVENTS.get(event) or OTHER_LABELS.get(event) or event}:{group}:{index}"


def trusted_hash(event: str, handler: dict[str, Any], matcher: Any = None) -> str:
    """The hash Codex keeps for ``handler`` of ``event`` once trusted (the module's docstring)."""
    timeout = handler.get("timeout")
    if event == "SessionEnd":
        default, least, most = SESSION_END_TIMEOUT_S
        timeout = min(max(timeout if isinstance(timeout, int) else default, least), most)
    else:
        timeout = max(timeout if isinstance(timeout, int) else DEFAULT_TIMEOUT_S, 1)
    normalised: dict[str, Any] = {"type": "command", "command": handler["command"], "timeout": timeout}
    normalised["async"] = handler.get("async") is True
    if isinstance(handler.get("statusMessage"), str):
        normalised["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": EVENTS[event], "hooks": [normalised]}
    if isinstance(matcher, str) and event not in MATCHERLESS:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@dataclass
class TrustEdits:
    """What changes in config.toml's ``[hooks.state]``: entries set (key -> hash; ``fresh``
    ones replace a stale entry of a hook no longer there), removed, and moved (old -> new key)."""

    trust: dict[str, str] = field(default_factory=dict)
    fresh: set[str] = field(default_factory=set)
    drop: list[str] = field(default_factory=list)
    moves: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.trust or self.drop or self.moves)


@dataclass
class HooksChange:
    path: Path
    action: str  # "install" or "uninstall"
    command: str
    before: str
    after: str
    events: list[str] = field(default_factory=list)  # events whose toka hook was added / removed
    # events whose toka hook now runs ``command`` or the inbox command, as the event wants
    updated: list[str] = field(default_factory=list)
    edits: TrustEdits = field(default_factory=TrustEdits)
    trusted: list[str] = field(default_factory=list)  # events whose trust entry is written / removed
    disabled: list[str] = field(default_factory=list)  # toka's hooks the user turned off in Codex
    inline: bool = False  # config.toml declares hooks too: Codex warns of hooks in two places
    inbox: bool = True  # the events that only record drop their payload into toka's inbox

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def to_json(self, trust_file: Path) -> dict[str, Any]:
        return {
            "file": str(self.path),
            "command": self.command,
            "events": self.events,
            "updated": self.updated,
            "trust_file": str(trust_file),
            "trusted": self.trusted,
            "moved": len(self.edits.moves),
            "disabled": self.disabled,
            "inline": self.inline,
            "inbox": self.inbox,
        }


def load(path: Path) -> tuple[str, dict[str, Any]]:
    """The file's text and its document; ConfigError (nothing written) when it is no hooks file."""
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    if not before.strip():
        return before, {}
    hint = "fix the file (or move it away), then rerun"
    try:
        document = json.loads(before)
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); left untouched", hint) from None
    if not isinstance(document, dict):
        raise ConfigError(f"{path} holds a JSON {type(document).__name__}, not an object; left untouched", hint)
    hooks = document.get("hooks", {})
    groups_ok = isinstance(hooks, dict) and all(
        isinstance(groups, list) and all(isinstance(g, dict) and isinstance(g.get("hooks", []), list) for g in groups)
        for groups in hooks.values()
    )
    if not groups_ok:
        raise ConfigError(
            f"{path}: 'hooks' is not an object of lists of groups; left untouched", "see Codex's hooks documentation"
        )
    return before, document


def plan_hooks(path: Path, state: dict[str, Any], *, uninstall: bool = False, inbox: bool = True) -> HooksChange:
    """What installing (or uninstalling) toka's hooks changes in ``path`` and in config.toml's
    ``[hooks.state]`` (``state``, as it is now), written nowhere yet; with ``inbox`` false, toka's
    hook on every event."""
    before, document = load(path)
    change = HooksChange(path, "uninstall" if uninstall else "install", hook_command(), before, before, inbox=inbox)
    source = key_source()
    hooks: Groups = document.get("hooks", {})
    if uninstall:
        _plan_removal(change, hooks, source, state)
    else:
        _plan_install(change, hooks, source, state, inbox)
    if change.events or change.updated:
        if hooks:
            document["hooks"] = hooks
        else:
            document.pop("hooks", None)
        change.after = json.dumps(document, indent=2, ensure_ascii=False) + "\n" if document else ""
    return change


def _plan_install(change: HooksChange, hooks: Groups, source: str, state: dict[str, Any], inbox: bool) -> None:
    for event in EVENTS:
        command = event_command(event, change.command, inbox)
        groups = hooks.get(event, [])
        found = False
        for g, group in enumerate(groups):
            for h, handler in enumerate(group.get("hooks") or []):
                if not is_toka_hook(handler):
                    continue
                found = True
                wanted = {"type": "command", "command": command}
                wanted |= {name: handler[name] for name in HASHED if name in handler}
                if handler != wanted:
                    group["hooks"][h] = handler = wanted
                    change.updated.append(event)
                key = trust_key(source, event, g, h)
                digest = trusted_hash(event, handler, group.get("matcher"))
                entry = state.get(key)
                if not isinstance(entry, dict) or entry.get("trusted_hash") != digest:
                    change.edits.trust[key] = digest
                    change.trusted.append(event)
                if isinstance(entry, dict) and entry.get("enabled") is False:
                    change.disabled.append(event)
        if found:
            continue
        handler = {"type": "command", "command": command}
        key = trust_key(source, event, len(groups), 0)
        hooks[event] = [*groups, {"hooks": [handler]}]
        change.edits.trust[key] = trusted_hash(event, handler)
        change.edits.fresh.add(key)
        change.events.append(event)
        change.trusted.append(event)
    change.updated = list(dict.fromkeys(change.updated))
    change.trusted = list(dict.fromkeys(change.trusted))


def _plan_removal(change: HooksChange, hooks: Groups, source: str, state: dict[str, Any]) -> None:
    for event in list(hooks):
        groups = hooks[event]
        kept: list[dict[str, Any]] = []
        for g, group in enumerate(groups):
            handlers = group.get("hooks") or []
            rest = []
            for h, handler in enumerate(handlers):
                key = trust_key(source, event, g, h)
                if is_toka_hook(handler):
                    change.events.append(event)
                    if key in state:
                        change.edits.drop.append(key)
                        change.trusted.append(event)
                    continue
                rest.append((key, handler))
            if not rest and handlers:
                continue
            for h, (key, _) in enumerate(rest):  # the user's hooks after toka's move up: so does their trust
                moved = trust_key(source, event, len(kept), h)
                if moved != key and key in state:
                    change.edits.moves[key] = moved
            kept.append({**group, "hooks": [handler for _, handler in rest]} if len(rest) != len(handlers) else group)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    change.events = list(dict.fromkeys(change.events))
    change.trusted = list(dict.fromkeys(change.trusted))


def hook_states(document: Any, path: Path) -> dict[str, Any]:
    """config.toml's ``[hooks.state]`` (a tomlkit document) as plain dicts; ConfigError when
    ``hooks`` or ``hooks.state`` is there but no table (Codex would refuse the file too)."""
    hooks = document.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise ConfigError(f"{path}: 'hooks' is not a table; left untouched", "fix the file, then rerun")
    table = None if hooks is None else hooks.get("state")
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise ConfigError(
            "Codex's config.toml: 'hooks.state' is not a table; left untouched", "fix the file, then rerun"
        )
    return {str(key): value.unwrap() if hasattr(value, "unwrap") else value for key, value in table.items()}


def apply_trust(document: Any, edits: TrustEdits) -> bool:
    """Make ``edits`` in config.toml (a tomlkit document), in Codex's own layout: a
    ``[hooks.state."KEY"]`` table per hook. Whether the file lost its ``[hooks]`` table."""
    import tomlkit

    if not edits:
        return False
    hooks = document.get("hooks")
    if hooks is None:
        hooks = tomlkit.table(is_super_table=True)
        document["hooks"] = hooks
    state = hooks.get("state")
    if state is None:
        state = tomlkit.table(is_super_table=True)
        hooks["state"] = state
    for key in edits.drop:
        state.pop(key, None)
    moving = {new: state.pop(old) for old, new in edits.moves.items() if old in state}
    for new, entry in moving.items():
        state[new] = entry
    for key, digest in edits.trust.items():
        entry = state.get(key)
        if entry is None or key in edits.fresh or not isinstance(entry, dict):
            entry = tomlkit.table()
            state[key] = entry
        entry["trusted_hash"] = digest
    if not state:
        del hooks["state"]
    if not hooks:
        del document["hooks"]
        return True
    return False


def inline_hooks(document: Any) -> bool:
    """Whether config.toml declares hooks itself (``[[hooks.<Event>]]``), beside hooks.json."""
    hooks = document.get("hooks")
    return isinstance(hooks, dict) and any(key != "state" for key in hooks)


def write_hooks(change: HooksChange) -> None:
    """Write hooks.json atomically, keeping its mode; an uninstall that leaves it empty removes it."""
    if not change.changed:
        return
    if not change.after:
        change.path.unlink(missing_ok=True)
        return
    write_atomically(change.path, change.after)
