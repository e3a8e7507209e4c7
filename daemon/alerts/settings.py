"""The ``[alerts]`` section of config.toml: the command run with each alert, how often, and the
limits of a 5-hour block."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from daemon.config import DAY_S
from daemon.setting import setting


@dataclass(frozen=True)
class AlertSettings:
    table: ClassVar[str] = "alerts"

    command: str = setting(
        "",
        "a command run with each alert as JSON on stdin (a notification, a webhook script); none when empty",
        env="TOKA_ALERT_COMMAND",
    )
    command_interval_s: float = setting(
        60.0, "seconds before the command runs again for the same alert", bounds=(0.001, 7 * DAY_S)
    )
    command_timeout_s: float = setting(
        10.0, "seconds the alert command may run before it is stopped", bounds=(0.1, 3600.0)
    )
    max_age_s: float = setting(
        3600.0,
        "seconds after which an agent's change is history, not an alert (an import of past sessions raises none)",
        bounds=(1.0, 365 * DAY_S),
    )
    block_cost_limit: float = setting(
        0.0, "dollars a 5-hour block may cost before an alert (0: none)", bounds=(0.0, 1e9)
    )
    block_token_limit: int = setting(0, "tokens a 5-hour block may use before an alert (0: none)", bounds=(0, 10**15))
