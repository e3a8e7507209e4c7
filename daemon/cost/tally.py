"""Usage rows summed and priced: per label (a day, a week, a session, a block), and within it per
model and per agent.

Rows are first summed per label, model, agent, prompt class (fast-mode calls are a class of
their own: store/usage.py) and price entry, then each sum is
priced once: a price is linear in tokens, so the sum of a class's calls costs what the calls
cost one by one, and a report over a year prices a few thousand sums instead of every row. A
model without a price adds its calls to ``unpriced_calls`` and its name to ``unpriced_models``,
never a cost.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from daemon.cost.prices import ModelPrices, PriceTable, Rates, Tokens
from store.usage import UsageRow, class_prompt, class_speed

MICRODOLLAR = Decimal("0.000001")


def usd(cost: Decimal) -> float:
    """A cost as JSON shows it: dollars, to the millionth."""
    return float(cost.quantize(MICRODOLLAR))


@dataclass(slots=True)
class Sums:
    """Calls and tokens of some usage rows, and when the first and last of their calls were."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_tokens: int = 0
    cache_creation_1h_tokens: int = 0
    cache_read_tokens: int = 0
    first_ts: int | None = None
    last_ts: int | None = None
    telemetry_calls: int = 0  # of the calls, those counted from the agent's telemetry (store/usage.py)

    def add_row(self, row: UsageRow | Sums) -> None:
        self.calls += row.calls
        self.telemetry_calls += row.telemetry_calls
        self.input_tokens += row.input_tokens
        self.output_tokens += row.output_tokens
        self.cache_creation_tokens += row.cache_creation_tokens
        self.cache_creation_1h_tokens += row.cache_creation_1h_tokens
        self.cache_read_tokens += row.cache_read_tokens
        if row.first_ts is not None:
            self.first_ts = row.first_ts if self.first_ts is None else min(self.first_ts, row.first_ts)
        if row.last_ts is not None:
            self.last_ts = row.last_ts if self.last_ts is None else max(self.last_ts, row.last_ts)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_creation_tokens + self.cache_read_tokens

    def tokens(self) -> Tokens:
        return Tokens(
            self.input_tokens,
            self.output_tokens,
            self.cache_creation_tokens,
            self.cache_creation_1h_tokens,
            self.cache_read_tokens,
        )

    def counts_json(self) -> dict[str, int]:
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_tokens": self.cache_creation_tokens,
            "cache_creation_1h_tokens": self.cache_creation_1h_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "total_tokens": self.total_tokens,
            "telemetry_calls": self.telemetry_calls,
        }

    @property
    def usage_source(self) -> str | None:
        """Where the calls were counted from: transcript (or toka's own clients), telemetry, or both."""
        if not self.calls:
            return None
        if not self.telemetry_calls:
            return "transcript"
        return "telemetry" if self.telemetry_calls == self.calls else "both"


@dataclass(slots=True)
class Tally(Sums):
    """Sums with their cost: what the priced calls cost, and how many calls had no price."""

    cost: Decimal = field(default_factory=Decimal)
    priced_calls: int = 0
    unpriced_calls: int = 0
    models: set[str] = field(default_factory=set)
    unpriced_models: set[str] = field(default_factory=set)

    def add(self, sums: Sums, model: str, cost: Decimal | None) -> None:
        self.add_row(sums)
        self.models.add(model)
        if cost is None:
            self.unpriced_calls += sums.calls
            self.unpriced_models.add(model)
        else:
            self.cost += cost
            self.priced_calls += sums.calls

    @property
    def cost_usd(self) -> float | None:
        """The cost; None when nothing of it was priced and some of it has no price."""
        if self.unpriced_models and not self.priced_calls and not self.cost:
            return None
        return usd(self.cost)

    def to_json(self) -> dict[str, Any]:
        return self.counts_json() | {"cost_usd": self.cost_usd, "unpriced_calls": self.unpriced_calls}


def shown_model(model: str) -> str | None:
    return model or None


class Groups:
    """Rows summed per label, priced, with their totals; per model (``breakdown``) and per agent
    (``by_agent``) within each label too."""

    def __init__(self, prices: PriceTable, breakdown: bool = False, by_agent: bool = False) -> None:
        self.prices = prices
        self.breakdown = breakdown
        self.by_agent = by_agent
        self._cells: dict[tuple[str, str, str, int, int], Sums] = defaultdict(Sums)
        self._rates: dict[int, Rates | None] = {}
        self._moments: dict[int, datetime] = {}

    def add(self, label: str, row: UsageRow) -> None:
        found = self.prices.find(row.model)
        rates = None if found is None else found.rates(self._moment(row.bucket), class_speed(row.prompt_class))
        self._rates.setdefault(id(rates), rates)
        agent = row.agent if self.by_agent else ""
        self._cells[(label, row.model, agent, row.prompt_class, id(rates))].add_row(row)

    def add_all(self, rows: Iterable[UsageRow], label_of: Callable[[UsageRow], str | None]) -> None:
        for row in rows:
            label = label_of(row)
            if label is not None:
                self.add(label, row)

    def _moment(self, bucket: int) -> datetime:
        moment = self._moments.get(bucket)
        if moment is None:
            moment = self._moments[bucket] = datetime.fromtimestamp(bucket / 1_000_000, UTC)
        return moment

    def tallies(self) -> Tallied:
        tallied = Tallied()
        for (label, model, agent, prompt_class, rates_id), sums in self._cells.items():
            rates = self._rates[rates_id]
            cost = None if rates is None else rates.cost(sums.tokens(), class_prompt(prompt_class))
            tallied.labels[label].add(sums, model, cost)
            tallied.total.add(sums, model, cost)
            if self.breakdown:
                tallied.models[label][model].add(sums, model, cost)
            if self.by_agent:
                tallied.agents[label][agent].add(sums, model, cost)
        return tallied

    def priced_as(self, model: str) -> dict[str, Any] | None:
        found: ModelPrices | None = self.prices.find(model)
        return None if found is None else found.to_json()


@dataclass
class Tallied:
    """Each label's tally, the total, and each label's tallies per model and per agent."""

    labels: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    total: Tally = field(default_factory=Tally)
    models: dict[str, dict[str, Tally]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(Tally)))
    agents: dict[str, dict[str, Tally]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(Tally)))


def model_names(models: set[str]) -> list[str | None]:
    """Model names in order; usage that named no model as null, last."""
    return [*sorted(m for m in models if m), *([None] if "" in models else [])]


def tally_json(tally: Tally) -> dict[str, Any]:
    """A tally with the models it covers."""
    return tally.to_json() | {"models": model_names(tally.models)}


def totals_json(tally: Tally) -> dict[str, Any]:
    return tally_json(tally) | {"unpriced_models": model_names(tally.unpriced_models)}


def breakdown_json(groups: Groups, per_model: dict[str, Tally]) -> list[dict[str, Any]]:
    """A label's tallies per model, the costliest first."""
    ordered = sorted(per_model.items(), key=lambda item: (-(item[1].cost), item[0]))
    return [{"model": shown_model(model), "priced_as": groups.priced_as(model)} | t.to_json() for model, t in ordered]
