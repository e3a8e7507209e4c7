"""A HOME of a test's own, holding the agents' folders as Claude Code and Codex lay them out
(``.claude/projects/<project>/<session>.jsonl`` with its subagents, ``.codex/sessions/YYYY/MM/DD/
rollout-….jsonl``), filled with the shared transcript fixtures or the project's own example, for
the tests of the daemon following the agents' folders (``watch.agents``)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from transcripts import TRANSCRIPTS, shared_or_skip

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "session.jsonl"
# A few small sessions of each agent, a Claude Code one with its agent-*.jsonl files beside it.
SMALL_CLAUDE = (
    "marot__short.jsonl",
    "marot__tool_heavy.jsonl",
    "jazzyalex__stage0_claude_small.jsonl",
    "codemie-ai__-tmp-private",
)
SMALL_CODEX = (
    "jazzyalex__stage0_codex_small.jsonl",
    "madshn__rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl",
)


@dataclass(frozen=True)
class AgentsHome:
    home: Path
    claude: Path  # ~/.claude/projects
    codex: Path  # ~/.codex/sessions

    def files(self, folder: Path) -> list[Path]:
        return sorted(path for path in folder.rglob("*.jsonl") if path.is_file())


def make_agents_home(home: Path) -> AgentsHome:
    """The two folders, empty."""
    claude, codex = home / ".claude" / "projects", home / ".codex" / "sessions"
    (claude / "-work-app").mkdir(parents=True)
    (codex / "2026" / "02" / "23").mkdir(parents=True)
    return AgentsHome(home, claude, codex)


def fill_from_fixtures(agents: AgentsHome, claude: tuple[str, ...] | None, codex: tuple[str, ...] | None) -> None:
    """Copy the shared fixtures named (all of them: None) into the folders; a skip without them."""
    shared_or_skip("fixtures", "transcripts")
    for names, source, target in (
        (claude, TRANSCRIPTS / "claude", agents.claude / "-work-app"),
        (codex, TRANSCRIPTS / "codex", agents.codex / "2026" / "02" / "23"),
    ):
        for entry in sorted(source.iterdir()) if names is None else [source / name for name in names]:
            if entry.is_dir():
                shutil.copytree(entry, target / entry.name)
            else:
                shutil.copy2(entry, target / entry.name)


def fill_with_example(agents: AgentsHome) -> Path:
    """The project's own example session, as a transcript in Claude Code's folder."""
    target = agents.claude / "-work-app" / EXAMPLE.name
    shutil.copy2(EXAMPLE, target)
    return target
