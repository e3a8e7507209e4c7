"""Writes ``model_prices.json``, the price table toka ships, from the installed `genai-prices`_.

genai-prices is a maintained table of models and their prices (per provider, with long-context
tiers, the one-hour cache writes, and price changes by date), and it ships its data, so it
works offline. toka reads a JSON copy of it instead of importing it: genai-prices takes 0.4 s
to import (pydantic) and brings pydantic and an HTTP client along, where the JSON takes a few
milliseconds and nothing. ``python -m daemon.cost.generate`` writes the copy again from the
installed genai-prices (run it after raising the pin in pyproject.toml's test extra); a test
checks that the shipped file is what the pinned version gives, and that toka prices every model
of it as genai-prices itself does.

Kept of each model: the clauses its names are matched by, and its prices per million tokens of
input, output, cache reads, cache writes and one-hour cache writes, each a flat price or a base
with tiers (a call whose whole prompt is above a tier's start pays that tier's price for all its
tokens), under the dates and hours each applies from. Prices per request, per search, or per
token of audio, images or video are left out: coding agents' transcripts count none of them.
A model priced in none of them but in other units (audio hours, pages) is left out; a model
without any price (a free one) is kept, and costs nothing. A model's fast-mode prices
(genai-prices' price variants for ``speed: fast``: Anthropic's fast mode, which Claude Code records
as ``usage.speed``) are kept as its ``fast`` entries; its other variants (batch, OpenAI's service
tiers) are left out: no transcript says a call used them.

What the pinned genai-prices lacks comes from ``price_additions.json`` beside this module,
reviewed by hand, each entry with its source: models it has no price for (added ahead of the
others of their provider) and fast-mode premiums it does not give (``fast_multiplier``: the
standard prices of every tier times that). An addition genai-prices has come to cover is refused,
so that a raised pin drops it.

.. _genai-prices: https://github.com/pydantic/genai-prices
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any

from daemon.cost.prices import RATE_KEYS, TABLE, Shipped, load_table

ADDITIONS = Path(__file__).with_name("price_additions.json")
# The price variants kept: fast mode, which the agents' usage records say a call was served in.
FAST_VARIANT = {"speed": "fast"}


def build_table() -> dict[str, Any]:
    """The table from the installed genai-prices with the reviewed additions, in toka's JSON shape."""
    table = genai_table()
    add(table, json.loads(ADDITIONS.read_text(encoding="utf-8")))
    return table


def add(table: dict[str, Any], additions: dict[str, Any]) -> None:
    """Writes ``additions`` (price_additions.json's shape) into ``table``; ValueError for one
    the table already covers."""
    providers = {provider["id"]: provider for provider in table["providers"]}
    plain = Shipped(table["source"], table["providers"])
    for model in additions.get("models", ()):
        found = plain.find(model["id"].lower())
        if found is not None:
            raise ValueError(
                f"{table['source']} prices {model['id']} (as {found.model}): drop it from {ADDITIONS.name}"
            )
        entry = {"id": model["id"], "match": model["match"], "prices": model["prices"]}
        providers[model["provider"]]["models"].insert(0, entry)
    for premium in additions.get("fast_multipliers", ()):
        [model] = [m for m in providers[premium["provider"]]["models"] if m["id"] == premium["model"]]
        if model.get("fast"):
            raise ValueError(f"{table['source']} prices {model['id']} in fast mode: drop it from {ADDITIONS.name}")
        model["fast_multiplier"] = premium["multiplier"]


def genai_table() -> dict[str, Any]:
    """The table from the installed genai-prices, in toka's JSON shape."""
    from importlib.metadata import version

    from genai_prices.data import providers

    shipped = []
    for provider in providers:
        models = [model for model in (_model(m) for m in provider.models) if model is not None]
        if models:
            shipped.append(
                {
                    "id": provider.id,
                    "match": None if provider.model_match is None else _clause(provider.model_match),
                    "fallback": list(provider.fallback_model_providers or []),
                    "models": models,
                }
            )
    return {"source": f"genai-prices {version('genai-prices')}", "providers": shipped}


def _model(model: Any) -> dict[str, Any] | None:
    conditional = model.prices if isinstance(model.prices, list) else None
    entries = []
    priced_otherwise = False
    for entry in conditional or [None]:
        prices = model.prices if entry is None else entry.prices
        entries.append({"when": _constraint(None if entry is None else entry.constraint), **_rates(prices)})
        priced_otherwise |= any(value is not None for value in vars(prices).values())
    if priced_otherwise and not any(entry["input"] is not None or entry["output"] is not None for entry in entries):
        return None  # priced by the hour, page or request only: nothing toka counts
    shipped = {"id": model.id, "match": _clause(model.match), "prices": entries}
    fast = [
        {"when": _constraint(variant.constraint), **_rates(variant.prices)}
        for variant in getattr(model, "price_variants", None) or ()
        if dict(variant.when) == FAST_VARIANT
    ]
    if fast:
        shipped["fast"] = fast
    return shipped


def _rates(prices: Any) -> dict[str, Any]:
    return {key: _rate(getattr(prices, f"{key}_mtok", None)) for key in RATE_KEYS}


def _rate(value: Any) -> str | dict[str, Any] | None:
    """A flat price as a decimal string; a tiered one as its base and [start, price] tiers."""
    if value is None:
        return None
    tiers = getattr(value, "tiers", None)
    if tiers is None:
        return str(value)
    return {"base": str(value.base), "tiers": [[tier.start, str(tier.price)] for tier in tiers]}


def _constraint(constraint: Any) -> dict[str, str] | None:
    if constraint is None:
        return None
    if isinstance(getattr(constraint, "start_date", None), date):
        return {"from": constraint.start_date.isoformat()}
    return {"from_time": _utc_time(constraint.start_time), "to_time": _utc_time(constraint.end_time)}


def _utc_time(value: time) -> str:
    """A time of day in UTC (genai-prices reads a naive one as UTC)."""
    if value.tzinfo is not None:
        value = datetime.combine(date(1970, 1, 1), value).astimezone(UTC).time()
    return value.replace(tzinfo=None).isoformat()


def _clause(clause: Any) -> dict[str, Any]:
    """A genai-prices match clause as JSON: ``{"equals": name}``, ``{"or": [...]}``, ..."""
    for name in ("equals", "starts_with", "ends_with", "contains", "regex"):
        if isinstance(getattr(clause, name, None), str):
            return {name: getattr(clause, name)}
    for name in ("or", "and"):
        children = getattr(clause, f"{name}_", None)
        if children is not None:
            return {name: [_clause(child) for child in children]}
    raise ValueError(f"a genai-prices clause toka does not know: {clause!r}")


def write_table() -> None:
    TABLE.write_text(json.dumps(build_table(), separators=(",", ":"), sort_keys=True) + "\n", encoding="utf-8")
    load_table.cache_clear()
    print(f"wrote {TABLE} from {load_table().source}", file=sys.stderr)


if __name__ == "__main__":
    write_table()
