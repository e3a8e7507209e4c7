"""The ``[models]`` section of config.toml: the user's context windows and prices by model name
prefix, over the tables toka ships (daemon/agents/windows.py, daemon/cost/prices.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from daemon.cost.overrides import parse_prices
from daemon.setting import setting


@dataclass(frozen=True)
class ModelSettings:
    table: ClassVar[str] = "models"

    windows: dict[str, int] = setting(
        {},
        'context windows by model name prefix, over the model table (e.g. {"my-model" = 32000})',
        env="TOKA_MODEL_WINDOWS",
    )
    prices: dict[str, dict[str, Any]] = setting(
        {},
        "USD per million tokens by model name prefix, over the price table (docs/cost.md), e.g."
        ' {"my-model" = { input = 3.0, output = 15.0 }}',
        env="TOKA_MODEL_PRICES",
        parse=parse_prices,
    )
