"""Where transcripts are on disk: the JSON-lines files under a folder, in the order to read them.

Claude Code keeps a session as ``<project>/<session>.jsonl`` and the sessions of its subagents
as ``<project>/<session>/subagents/agent-*.jsonl`` (``agent-*.jsonl`` files may also sit beside
the sessions). A subagent's events belong to its parent session, and each main file is listed
before its subagents' files. Codex rollouts and toka's own files have no subagent files and come
in name order. ``toka import`` of a folder and the watchers (``toka watch``, the daemon's) list
files this way.
"""

from __future__ import annotations

from pathlib import Path


def find_transcripts(root: Path) -> list[Path]:
    """Claude Code transcripts under ``root`` (or ``root`` itself, with its subagent files):
    each main file followed by its ``<session>/subagents/agent-*.jsonl`` files, then the
    ``agent-*.jsonl`` files that sit beside sessions and any other subagent file."""
    if root.is_file():
        files = [root]
        folder = root.with_suffix("") / "subagents"
        if folder.is_dir():
            files += sorted(p for p in folder.glob("agent-*.jsonl") if p.is_file())
        return files
    found = sorted(p for p in root.rglob("*.jsonl") if p.is_file())
    ordered: list[Path] = []
    listed: set[Path] = set()
    for main in (p for p in found if not _is_subagent_file(p)):
        folder = main.with_suffix("") / "subagents"
        for path in [main, *sorted(p for p in folder.glob("agent-*.jsonl") if p.is_file())]:
            if path not in listed:
                ordered.append(path)
                listed.add(path)
    ordered += [p for p in found if p not in listed]
    return ordered


def _is_subagent_file(path: Path) -> bool:
    return path.name.startswith("agent-") or path.parent.name == "subagents"
