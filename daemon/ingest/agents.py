"""The agents' own transcript folders: where Claude Code and Codex keep their sessions, which the
daemon follows while ``watch.agents`` is on (daemon/ingest/watch.py), so that a new user's
history is in the log without naming a path.

Claude Code keeps its transcripts in ``projects/`` of its config dir: ``$CLAUDE_CONFIG_DIR``,
which may name several dirs separated by commas, or else ``~/.claude`` (and ``~/.config/claude``,
where some versions kept it). Codex keeps its rollouts in
``$CODEX_HOME/sessions``, ``~/.codex/sessions`` by default (docs/agent-formats.md, section 1).
The folders are read from the daemon's environment, that of whoever started it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

CLAUDE_CODE = "claude-code"
CODEX = "codex"


@dataclass(frozen=True, slots=True)
class AgentFolder:
    """One folder an agent writes its transcripts into."""

    agent: str  # claude-code or codex
    path: Path


def agent_folders(environ: Mapping[str, str] | None = None) -> list[AgentFolder]:
    """Where the agents keep their transcripts, whether or not the folders exist, each once."""
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or Path.home())
    configured = [part.strip() for part in env.get("CLAUDE_CONFIG_DIR", "").split(",") if part.strip()]
    claude = [_under(home, part) for part in configured] or [home / ".config" / "claude", home / ".claude"]
    codex = _under(home, env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
    folders = [AgentFolder(CLAUDE_CODE, folder / "projects") for folder in claude]
    folders.append(AgentFolder(CODEX, codex / "sessions"))
    unique: dict[Path, AgentFolder] = {}
    for folder in folders:
        unique.setdefault(folder.path.absolute(), AgentFolder(folder.agent, folder.path.absolute()))
    return list(unique.values())


def _under(home: Path, path: str) -> Path:
    """``path`` with a leading ``~`` read as ``home`` (the environment's, not this process's)."""
    if path == "~" or path.startswith("~/"):
        return home / path[2:]
    return Path(path)
