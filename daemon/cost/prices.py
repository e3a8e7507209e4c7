"""What tokens cost: the price table toka ships, the config's own prices over it, and the price of
a model's tokens.

The table (``model_prices.json`` beside this module) is a copy of `genai-prices`_ at the version
the test extra pins, written by ``python -m daemon.cost.generate``; every figure toka prices names
it (``genai-prices 0.2.3``). A model is found as genai-prices finds it: the first provider whose
clause matches the name (``claude`` → Anthropic), then the first of that provider's models whose
clauses match (and of the providers it falls back on; a compact date such as ``-20251001`` is
tried as ``-2025-10-01`` too). A name its maker's provider does not list is looked for in every
provider, in the table's order: Bedrock's ``us.anthropic.claude-…-v1:0`` is AWS's. The ``[1m]``
that Claude Code appends to a model's name is dropped: long prompts are priced by the tiers.

``[models] prices`` in config.toml adds models or overrides the table's (by name prefix, longest
first, after dropping a date suffix, as ``[models] windows`` does). A model that neither knows is
unpriced: reports count its calls and tokens and say that they are unpriced; it is never priced
at 0.

Input, output, cache reads, cache writes and one-hour cache writes are priced apart, as
genai-prices prices them: a kind of token the model has no price for is paid at the price of
the kind it is part of (a model without a one-hour cache write price pays its cache write
price; one without any cache price pays its input price). A tiered price depends on the whole
prompt of one call (input, cache writes and cache reads): above a tier's start, all the call's
tokens of that kind pay the tier's price.

.. _genai-prices: https://github.com/pydantic/genai-prices
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date, datetime, time
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

from daemon.cost.overrides import as_table_rates
from store.usage import FAST

TABLE = Path(__file__).with_name("model_prices.json")
# The kinds of token priced, as the table names their prices (per million tokens).
RATE_KEYS = ("input", "output", "cache_read", "cache_write", "cache_write_1h")
MILLION = Decimal(1_000_000)
LONG_CONTEXT_SUFFIX = "[1m]"
_DATE = re.compile(r"-\d{8}$")
# genai-prices rewrites a compact date suffix (-20251211) as -2025-12-11 when a name does not match as it is.
_COMPACT_DATE = re.compile(r"(-)(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=-|:|$)")


@dataclass(frozen=True, slots=True)
class Tokens:
    """Tokens of some calls, in the kinds they are priced by. ``input`` is the uncached input;
    ``cache_write`` counts every cache write, ``cache_write_1h`` those of them kept for an hour."""

    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_write_1h: int = 0
    cache_read: int = 0

    @property
    def prompt(self) -> int:
        """The whole input: what a tier's start is compared with, for one call."""
        return self.input + self.cache_write + self.cache_read


@dataclass(frozen=True, slots=True)
class Rate:
    """USD per million tokens: ``base``, or above a tier's start (a prompt larger than it) its price."""

    base: Decimal
    tiers: tuple[tuple[int, Decimal], ...] = ()

    def times(self, factor: Decimal) -> Rate:
        return Rate(self.base * factor, tuple((start, price * factor) for start, price in self.tiers))

    def at(self, prompt: int) -> Decimal:
        for start, price in reversed(self.tiers):
            if prompt > start:
                return price
        return self.base

    @classmethod
    def of(cls, value: Any) -> Rate | None:
        """A rate as the table and the config give it: a number (or its string), or
        ``{"base": ..., "tiers": [[start, price], ...]}``."""
        if value is None:
            return None
        if isinstance(value, dict):
            tiers = sorted((int(start), _decimal(price)) for start, price in value.get("tiers", ()))
            return cls(_decimal(value["base"]), tuple(tiers))
        return cls(_decimal(value))


def _decimal(value: Any) -> Decimal:
    # str() first: a TOML float 3.75 is the decimal 3.75, not the binary fraction nearest it.
    return Decimal(str(value))


@dataclass(frozen=True, slots=True)
class Rates:
    """A model's prices at one time, per kind of token; None where it has none."""

    input: Rate | None = None
    output: Rate | None = None
    cache_read: Rate | None = None
    cache_write: Rate | None = None
    cache_write_1h: Rate | None = None

    def cost(self, tokens: Tokens, prompt: int | None = None) -> Decimal:
        """What ``tokens`` cost in USD. ``prompt``: the whole prompt of one of their calls, which
        picks the tier (every call of ``tokens`` falls in the same one); their own by default.

        Each kind's own tokens are what is left of its count once the kinds inside it that have
        a price of their own are taken out: one-hour writes out of cache writes, cache writes
        and reads out of the whole input (genai-prices' ``compute_leaf_values``)."""
        size = tokens.prompt if prompt is None else prompt
        hour = tokens.cache_write_1h if self.cache_write_1h is not None else 0
        writes = tokens.cache_write - hour if self.cache_write is not None else 0
        reads = tokens.cache_read if self.cache_read is not None else 0
        own = (
            (self.input, tokens.prompt - hour - writes - reads),
            (self.cache_read, reads),
            (self.cache_write, writes),
            (self.cache_write_1h, hour),
            (self.output, tokens.output),
        )
        total = Decimal(0)
        for rate, count in own:
            if rate is not None and count:
                total += rate.at(size) * count / MILLION
        return total

    @classmethod
    def of(cls, entry: Mapping[str, Any]) -> Rates:
        return cls(**{key: Rate.of(entry.get(key)) for key in RATE_KEYS})

    def over(self, standard: Rates) -> Rates:
        """These prices where they have one, ``standard``'s elsewhere (a price variant's rule)."""
        return replace(standard, **{key: getattr(self, key) for key in RATE_KEYS if getattr(self, key) is not None})

    def times(self, factor: Decimal) -> Rates:
        """Every price multiplied by ``factor``, tiers included."""
        return Rates(*(None if rate is None else rate.times(factor) for rate in (getattr(self, k) for k in RATE_KEYS)))


@dataclass(frozen=True, slots=True)
class PriceEntry:
    """Prices and when they apply: from a date (UTC) on, or at some hours of each day (UTC)."""

    rates: Rates
    start: date | None = None
    hours: tuple[time, time] | None = None

    def active(self, at: datetime) -> bool:
        if self.start is not None:
            return at.date() >= self.start
        if self.hours is not None:
            now, (begin, end) = at.time(), self.hours
            return begin <= now < end if begin <= end else now >= begin or now < end
        return True


@dataclass(frozen=True, slots=True)
class ModelPrices:
    """The prices of one model: ``model`` is its id in the table (or the config's name for it),
    ``origin`` says which: ``table`` or ``config``. ``fast``: its fast-mode prices as the table
    gives them (each over the standard price of its time, from its date on); ``fast_multiplier``:
    where the table has none, the premium that fast mode multiplies every standard price by."""

    model: str
    provider: str | None
    origin: str
    entries: tuple[PriceEntry, ...]
    fast: tuple[PriceEntry, ...] = ()
    fast_multiplier: Decimal | None = None

    @property
    def by_hour(self) -> bool:
        """Whether its prices depend on the hour of the day (off-peak prices)."""
        return any(entry.hours is not None for entry in self.entries)

    def rates(self, at: datetime, speed: str | None = None) -> Rates:
        """The prices at ``at`` (UTC): the last entry that applies then, else the first
        (genai-prices' rule for prices that changed); for a call served in fast mode (``speed``
        ``fast``), its fast prices. A model with no fast price pays its standard ones."""
        standard = next((entry.rates for entry in reversed(self.entries) if entry.active(at)), self.entries[0].rates)
        if speed != FAST:
            return standard
        for variant in self.fast:
            if variant.active(at):
                return variant.rates.over(standard)
        if self.fast_multiplier is not None:
            return standard.times(self.fast_multiplier)
        return standard

    @property
    def has_fast(self) -> bool:
        return bool(self.fast) or self.fast_multiplier is not None

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "provider": self.provider, "origin": self.origin}


def _entry(raw: Mapping[str, Any]) -> PriceEntry:
    when = raw.get("when") or {}
    hours = None
    if "from_time" in when:
        hours = (time.fromisoformat(when["from_time"]), time.fromisoformat(when["to_time"]))
    start = date.fromisoformat(when["from"]) if "from" in when else None
    return PriceEntry(Rates.of(raw), start, hours)


@dataclass(frozen=True)
class Shipped:
    """The table as shipped: its source and its providers, each model's prices left as JSON
    until a name matches it (the daemon prices a few dozen models of two thousand)."""

    source: str
    providers: list[dict[str, Any]]

    def find(self, name: str) -> ModelPrices | None:
        """The model ``name`` (lower case) names, by genai-prices' rule, else in any provider."""
        maker = next((p for p in self.providers if p["match"] is not None and _matches(p["match"], name)), None)
        if maker is not None and (found := self._in_provider(maker, name, fallbacks=True)):
            return found
        for provider in self.providers:
            if provider is not maker and (found := self._in_provider(provider, name, fallbacks=True)):
                return found
        return None

    def _in_provider(self, provider: dict[str, Any], name: str, fallbacks: bool) -> ModelPrices | None:
        for ref in dict.fromkeys((name, _COMPACT_DATE.sub(_dashed_date, name))):
            for model in provider["models"]:
                if _matches(model["match"], ref):
                    entries = tuple(_entry(raw) for raw in model["prices"])
                    fast = tuple(_entry(raw) for raw in model.get("fast", ()))
                    multiplier = model.get("fast_multiplier")
                    factor = None if multiplier is None else Decimal(multiplier)
                    return ModelPrices(model["id"], provider["id"], "table", entries, fast, factor)
            for other in provider["fallback"] if fallbacks else ():
                fallback = next((p for p in self.providers if p["id"] == other), None)
                if fallback is not None and (found := self._in_provider(fallback, ref, fallbacks=False)):
                    return found
        return None


def _dashed_date(match: re.Match[str]) -> str:
    year, month, day = (int(match.group(i)) for i in range(2, 5))
    try:
        date(year, month, day)
    except ValueError:
        return match.group(0)
    return f"-{year:04d}-{month:02d}-{day:02d}"


def _matches(clause: Mapping[str, Any], name: str) -> bool:
    """Whether ``name`` (lower case) fits a genai-prices clause (as daemon/cost/generate.py wrote it)."""
    if "equals" in clause:
        return name == str(clause["equals"]).lower()
    if "starts_with" in clause:
        return name.startswith(clause["starts_with"].lower())
    if "ends_with" in clause:
        return name.endswith(clause["ends_with"].lower())
    if "contains" in clause:
        return clause["contains"].lower() in name
    if "regex" in clause:
        return _regex(clause["regex"]).search(name) is not None
    if "or" in clause:
        return any(_matches(child, name) for child in clause["or"])
    return all(_matches(child, name) for child in clause["and"])


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


@cache
def load_table() -> Shipped:
    raw = json.loads(TABLE.read_text(encoding="utf-8"))
    return Shipped(raw["source"], raw["providers"])


class PriceTable:
    """The shipped table with the config's prices over it; models are looked up once each."""

    def __init__(
        self, overrides: Mapping[str, Mapping[str, Any]] | None = None, shipped: Shipped | None = None
    ) -> None:
        self.shipped = shipped or load_table()
        self.overrides = {
            name.lower(): ModelPrices(name, None, "config", (PriceEntry(Rates.of(as_table_rates(dict(prices)))),))
            for name, prices in (overrides or {}).items()
        }
        self._found: dict[str, ModelPrices | None] = {}

    @property
    def source(self) -> str:
        """The table every figure is priced with, e.g. ``genai-prices 0.2.3``."""
        return self.shipped.source

    def describe(self) -> dict[str, Any]:
        """What reports say they were priced with: the table and the models the config prices."""
        return {"table": self.source, "config": sorted(model.model for model in self.overrides.values())}

    def find(self, model: str | None) -> ModelPrices | None:
        """The prices of ``model`` as an agent names it; None when it is unpriced."""
        if not model:
            return None
        if model not in self._found:
            self._found[model] = self._find(model)
        return self._found[model]

    def _find(self, model: str) -> ModelPrices | None:
        name = model.strip().lower().removesuffix(LONG_CONTEXT_SUFFIX)
        undated = _DATE.sub("", name)
        for prefix in sorted(self.overrides, key=len, reverse=True):  # the most specific first
            if undated.startswith(prefix):
                return self.overrides[prefix]
        return self.shipped.find(name)
