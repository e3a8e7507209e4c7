"""The ``[lifecycle]`` section of config.toml: the context fill at which an agent goes WARNING and
CRITICAL, and what the daemon does then. Declared with the component that reads it; the
settings' loader (daemon/config_file.py) gets it from daemon/sections.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from daemon.contract.policies import OnCritical, choices_of
from daemon.setting import setting


@dataclass(frozen=True)
class LifecycleSettings:
    table: ClassVar[str] = "lifecycle"
    # Settings that must stay in order: the first below the second.
    in_order: ClassVar[tuple[tuple[str, str], ...]] = (("warning_pct", "critical_pct"),)

    warning_pct: float = setting(
        75.0, "context fill (% of the window) at which an agent goes WARNING", bounds=(1.0, 100.0)
    )
    critical_pct: float = setting(
        90.0, "context fill (% of the window) at which an agent goes CRITICAL", bounds=(1.0, 100.0)
    )
    on_critical: str = setting(
        "notify",
        "what the daemon does when a spawned agent goes CRITICAL: notify (a lifecycle event only) or handoff"
        " (hand its work to a successor); per agent with `toka agent spawn --policy`",
        choices_of(OnCritical),
    )
    max_handoffs: int = setting(5, "handoffs allowed per trace; the next one puts the agent in ERROR", bounds=(1, 1000))
    end_after_s: float = setting(
        86400.0,
        "seconds without activity of its own after which a running agent is ENDED (reason TIMEOUT);"
        " its next activity brings it back; 0: never",
        bounds=(0.0, 10 * 365 * 86400.0),
    )
