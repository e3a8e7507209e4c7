"""The ``[compression]`` section of config.toml: the policy, when compression is considered and
what it aims at, and the summarizer (docs/compression.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from daemon.config import DAY_S
from daemon.contract.policies import AUTO_COMPRESS_OFF, CompressionPolicy, choices_of
from daemon.setting import setting


@dataclass(frozen=True)
class CompressionSettings:
    table: ClassVar[str] = "compression"
    # Settings that must stay in order: the first below the second.
    in_order: ClassVar[tuple[tuple[str, str], ...]] = (("target_pct", "trigger_pct"),)

    policy: str = setting(
        "summarize",
        "how `toka compress` and automatic compression shrink a session: fifo, window, summarize or importance",
        choices_of(CompressionPolicy),
    )
    trigger_pct: float = setting(
        75.0, "context fill (% of the window) from which compression is considered", bounds=(1.0, 100.0)
    )
    target_pct: float = setting(37.5, "context fill (% of the window) compression aims at", bounds=(1.0, 99.0))
    min_messages: int = setting(20, "new messages a session needs since its last compression", bounds=(1, 1_000_000))
    min_interval_s: float = setting(1800.0, "seconds between two compressions of a session", bounds=(0.001, 30 * DAY_S))
    auto_compress: str = setting(
        "off",
        "compress a spawned agent's session by itself at the trigger (off, or a policy); per agent with"
        " `toka agent spawn --auto-compress`",
        (AUTO_COMPRESS_OFF, *choices_of(CompressionPolicy)),
    )
    summarizer: str = setting(
        "builtin",
        "builtin (extractive, offline), or a command that reads the text on stdin and writes the summary on stdout",
    )
    summarizer_timeout: float = setting(30.0, "seconds an external summarizer may take", bounds=(0.1, 3600.0))
