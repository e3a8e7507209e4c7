"""Installing `toka mcp` as an MCP server of Claude Code, and taking it out again; the file change
every integration makes (``FileChange``: before, after, the diff, the atomic write).

Claude Code keeps user-scope MCP servers in ``~/.claude.json`` under ``mcpServers`` and
project-scope ones in ``<project>/.mcp.json``. Toka adds one server named ``toka`` running
``<absolute path of this toka> mcp``: an agent does not start its servers with the user's shell
PATH, so a bare ``toka`` fails whenever the venv is not on it. Every other setting is kept: the
file is rewritten key for key in its order. A ``toka`` entry that runs another command is left
alone; installing twice changes nothing; uninstalling removes only toka's entry.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from store.errors import ConfigError
from toka_cli.integrate.executable import is_toka, toka_executable

SERVER_NAME = "toka"


def is_toka_server(entry: Any) -> TypeGuard[dict[str, Any]]:
    """An MCP server entry that runs ``toka mcp`` (by any path)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args") or []
    return is_toka(entry["command"]) and list(args)[:1] == ["mcp"]


def claude_path(project: Path | None) -> Path:
    if project is not None:
        return project.expanduser().absolute() / ".mcp.json"
    return Path.home() / ".claude.json"


@dataclass
class ServerChange:
    path: Path
    # "added", "updated" (another toka path), "removed", "installed" (as it was), "other" (a
    # `toka` entry of another command, left alone) or "absent".
    state: str
    command: str
    before: str
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                self.before.splitlines(keepends=True),
                self.after.splitlines(keepends=True),
                str(self.path),
                str(self.path),
            )
        )

    def to_json(self) -> dict[str, Any]:
        return {"file": str(self.path), "state": self.state, "command": f"{shlex.quote(self.command)} mcp"}


def read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


def decide(servers: Any, uninstall: bool, entry: dict[str, Any]) -> str:
    current = servers.get(SERVER_NAME) if servers is not None else None
    if current is None:
        return "absent" if uninstall else "added"
    if not is_toka_server(current):
        return "other"
    if uninstall:
        return "removed"
    same = current.get("command") == entry["command"] and list(current.get("args") or []) == entry["args"]
    same = same and dict(current.get("env") or {}) == dict(entry.get("env") or {})
    return "installed" if same else "updated"


def plan_claude(path: Path, *, uninstall: bool = False) -> ServerChange:
    before = read_text(path)
    try:
        data = json.loads(before) if before.strip() else {}
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); left untouched", "fix the file, then rerun") from None
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise ConfigError(f"{path}: 'mcpServers' is not an object; left untouched")
    command = toka_executable()
    entry = {"type": "stdio", "command": command, "args": ["mcp"], "env": {}}
    servers = data.get("mcpServers")
    state = decide(servers, uninstall, entry)
    if state in ("added", "updated"):
        data.setdefault("mcpServers", {})[SERVER_NAME] = entry
    elif state == "removed":
        del data["mcpServers"][SERVER_NAME]
        if not data["mcpServers"]:
            del data["mcpServers"]
    after = (
        before if state in ("installed", "other", "absent") else json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    )
    return ServerChange(path, state, command, before, after)


def apply(change: ServerChange) -> None:
    """Write the changed file atomically, keeping its mode."""
    write_atomically(change.path, change.after)


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step (a reader sees the old file or the new one),
    keeping its mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        if path.exists():
            shutil.copymode(path, temp)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
