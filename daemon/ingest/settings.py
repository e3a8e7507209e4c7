"""The ``[watch]`` section of config.toml: the transcripts the daemon ingests as they are written."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from daemon.setting import setting


@dataclass(frozen=True)
class WatchSettings:
    table: ClassVar[str] = "watch"

    paths: tuple[str, ...] = setting(
        (),
        "transcript files and folders the daemon ingests as they are written (as `toka watch` does)",
        env="TOKA_WATCH_PATHS",
    )
    agents: bool = setting(
        True,
        "whether the daemon also follows the agents' own transcript folders (Claude Code's projects/ in each dir"
        " of $CLAUDE_CONFIG_DIR, or in ~/.config/claude and ~/.claude; Codex's $CODEX_HOME/sessions or"
        " ~/.codex/sessions), their whole history imported at its first start",
        env="TOKA_WATCH_AGENTS",
    )
