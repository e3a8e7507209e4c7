"""``[models] prices``: the config's own prices, checked where settings are read (daemon/cost/settings.py).

In config.toml, per model name (a prefix, as ``[models] windows`` takes): USD per million tokens
of ``input``, ``output``, ``cache_write``, ``cache_write_1h`` and ``cache_read``, at least one of
input and output, and optional ``tiers``, each a prompt size it applies ``above`` with its own
prices::

    [models.prices."house-model"]
    input = 0.5
    output = 1.5

    [models.prices."claude-sonnet-4-5"]
    input = 3.0
    output = 15.0
    cache_write = 3.75
    cache_write_1h = 6.0
    cache_read = 0.3
    tiers = [{ above = 200000, input = 6.0, output = 22.5, cache_write = 7.5, cache_write_1h = 12.0, cache_read = 0.6 }]

In the environment (``TOKA_MODEL_PRICES``) and with ``toka config set models.prices``, the same
table as JSON: ``{"house-model": {"input": 0.5, "output": 1.5}}``.

A tier may start only at a prompt size the usage projection tells apart
(:data:`store.usage.PROMPT_CLASSES`: the tier starts of the shipped table), so that reports can
price from the projection exactly.
"""

from __future__ import annotations

import json
import math
from typing import Any

from store.errors import ConfigError
from store.usage import PROMPT_CLASSES

RATES = ("input", "output", "cache_write", "cache_write_1h", "cache_read")
EXAMPLE = '[models.prices."my-model"] input = 3.0, output = 15.0 (USD per million tokens)'


def parse_prices(key: str, value: Any, source: str) -> dict[str, dict[str, Any]]:
    """The prices of ``value`` (a TOML table, or its JSON text), checked; ConfigError naming the
    first that is wrong."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except ValueError:
            raise ConfigError(
                f"{key} from {source} is not a JSON object of prices",
                'e.g. {"my-model": {"input": 3.0, "output": 15.0}}',
            ) from None
    if not isinstance(value, dict):
        raise ConfigError(f"{key} from {source} must be a table of models, got {value!r}", EXAMPLE)
    checked = {}
    for model, prices in value.items():
        where = f"{key}.{model} from {source}"
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(f"{key} from {source}: a model name must be a non-empty string", EXAMPLE)
        checked[model] = _model_prices(where, prices)
    return checked


def _model_prices(where: str, prices: Any) -> dict[str, Any]:
    if not isinstance(prices, dict):
        raise ConfigError(f"{where} must be a table of prices, got {prices!r}", EXAMPLE)
    rates = _rates(where, {k: v for k, v in prices.items() if k != "tiers"})
    if "input" not in rates and "output" not in rates:
        raise ConfigError(f"{where} needs an input or an output price", EXAMPLE)
    tiers = prices.get("tiers", [])
    if not isinstance(tiers, list):
        raise ConfigError(f"{where}.tiers must be a list of tables", "tiers = [{ above = 200000, input = 6.0 }]")
    checked_tiers = []
    for tier in tiers:
        if not isinstance(tier, dict) or tier.get("above") not in PROMPT_CLASSES:
            starts = ", ".join(str(start) for start in PROMPT_CLASSES)
            hint = "e.g. { above = 200000, input = 6 }"
            raise ConfigError(f"{where}: each tier needs `above`, one of {starts}", hint)
        tier_rates = _rates(f"{where}.tiers", {k: v for k, v in tier.items() if k != "above"})
        unknown = set(tier_rates) - set(rates)
        if unknown:
            raise ConfigError(f"{where}: a tier prices {', '.join(sorted(unknown))}, which the model has no price for")
        checked_tiers.append({"above": tier["above"], **tier_rates})
    if checked_tiers:
        rates["tiers"] = sorted(checked_tiers, key=lambda tier: tier["above"])
    return rates


def _rates(where: str, prices: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(prices) - set(RATES))
    if unknown:
        raise ConfigError(f"{where}: unknown price {unknown[0]!r}", f"known: {', '.join(RATES)}, tiers")
    for name, price in prices.items():
        if isinstance(price, bool) or not isinstance(price, (int, float)) or not 0 <= price < math.inf:
            raise ConfigError(f"{where}.{name} must be a non-negative number (USD per million tokens), got {price!r}")
    return dict(prices)


def as_table_rates(prices: dict[str, Any]) -> dict[str, Any]:
    """The checked prices of one model in the shape of the shipped table's entries (daemon/cost/prices.py)."""
    tiers = prices.get("tiers", [])
    entry: dict[str, Any] = {}
    for name in RATES:
        if name not in prices:
            continue
        steps = [[tier["above"], tier[name]] for tier in tiers if name in tier]
        entry[name] = {"base": prices[name], "tiers": steps} if steps else prices[name]
    return entry
