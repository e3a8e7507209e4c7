"""The cost documents the CLI and the TUI read (docs/json.md, docs/cost.md), as declared types;
results.py's counterpart for reports. No `from __future__ import annotations`: TypedDict reads
NotRequired from the evaluated annotations."""

from typing import NotRequired, TypedDict


class PricedAs(TypedDict):
    """The entry of the price table (or of the config) a model was priced with."""

    model: str
    provider: str | None
    origin: str  # table | config


class Counts(TypedDict):
    calls: int
    input_tokens: int
    output_tokens: int
    cache_creation_tokens: int
    cache_creation_1h_tokens: int
    cache_read_tokens: int
    total_tokens: int
    telemetry_calls: int  # of the calls, those counted from the agent's telemetry (docs/otel.md)
    cost_usd: float | None  # null: nothing of it has a price
    unpriced_calls: int


class ModelCounts(Counts):
    model: str | None
    priced_as: PricedAs | None


class AgentCounts(Counts):
    agent: str | None


class PeriodRow(Counts):
    period: str
    models: list[str | None]
    breakdown: NotRequired[list[ModelCounts]]


class SessionRow(Counts):
    session: str
    source: str
    project: str | None
    first_ts: str | None
    last_ts: str | None
    models: list[str | None]
    usage_source: str | None  # transcript, telemetry or both: where its calls were counted from
    agents: list[AgentCounts]
    breakdown: NotRequired[list[ModelCounts]]


class BurnRate(TypedDict):
    tokens_per_minute: float
    cost_per_hour: float | None


class Projection(TypedDict):
    """What the active block will have used at its end, at its burn rate."""

    total_tokens: int
    cost_usd: float | None


class Limits(TypedDict):
    token_limit: int | None
    cost_limit: float | None


class BlockLimits(Limits):
    token_pct: float | None
    projected_token_pct: float | None
    cost_pct: float | None
    projected_cost_pct: float | None


class BlockRow(Counts):
    start: str
    end: str
    first_ts: str
    last_ts: str
    active: bool
    remaining_minutes: float | None
    models: list[str | None]
    burn_rate: BurnRate | None
    projection: Projection | None
    limits: BlockLimits
    breakdown: NotRequired[list[ModelCounts]]


class Totals(Counts):
    models: list[str | None]
    unpriced_models: list[str | None]


class PriceSource(TypedDict):
    table: str  # e.g. genai-prices 0.2.3
    config: list[str]  # the models [models] prices prices


class Report(TypedDict):
    report: str  # daily, weekly, monthly, session, blocks
    timezone: str
    since: str | None
    until: str | None
    source: str | None
    project: str | None
    prices: PriceSource
    rows: list[PeriodRow] | list[SessionRow] | list[BlockRow]
    totals: Totals
    now: NotRequired[str]  # blocks: when the active block was judged
    limits: NotRequired[Limits]  # blocks


class AgentToday(Counts):
    session: str
    agent: str | None
    source: str
    last_ts: str | None


class Today(Counts):
    date: str
    models: list[str | None]


class LiveSummary(TypedDict):
    """``cost.summary`` and each line of ``cost.live`` (`toka report blocks --live --json`)."""

    now: str
    timezone: str
    source: str | None
    prices: PriceSource
    today: Today
    block: BlockRow | None
    agents: list[AgentToday]
