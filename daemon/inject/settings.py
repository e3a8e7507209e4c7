"""The ``[inject]`` section of config.toml: what toka gives the agent through its hooks, and how
much of it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from daemon.contract.policies import choices_of
from daemon.setting import setting


class InjectMode(StrEnum):
    ALL = "all"  # handoffs at session start, the WARNING/CRITICAL notice, the project recall when on
    HANDOFFS = "handoffs"  # the handoffs at session start only
    OFF = "off"  # nothing: hooks only record


@dataclass(frozen=True)
class InjectSettings:
    table: ClassVar[str] = "inject"

    mode: str = setting(
        "all",
        "what hooks give the agent: all (handoffs at session start and the WARNING/CRITICAL notice), handoffs"
        " (session start only) or off; TOKA_INJECT=0 in an agent's environment turns it off for that agent",
        choices_of(InjectMode),
        env="TOKA_INJECT_MODE",
    )
    budget_tokens: int = setting(
        3000,
        "the most tokens one injection may hold; a longer handoff is cut and says so",
        bounds=(200, 100_000),
        env="TOKA_INJECT_BUDGET",
    )
    recall: bool = setting(
        False,
        "at the start of a session that continues nothing, give the agent the latest notes of its folder",
        env="TOKA_INJECT_RECALL",
    )
