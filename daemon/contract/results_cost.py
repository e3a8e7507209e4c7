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


class PlanWindow(TypedDict):
    """One of Codex's limit windows, as its latest reading gave it (daemon/cost/plan_limits.py)."""

    name: str  # primary (5 hours), secondary (a week)
    window_minutes: int
    used_pct: float
    resets_at: str | None
    reset: bool  # it started over since the reading: what is used now is not known
    burn_pct_per_hour: float | None
    runs_out_at: str | None  # at that rate, when it is used up, if before it starts over


class PlanLimits(TypedDict):
    """Codex's plan limits: its latest ``rate_limits`` reading."""

    source: str  # codex
    session: str
    as_of: str
    limit_id: str | None
    plan_type: str | None
    windows: list[PlanWindow]


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
    plan: NotRequired[str]  # blocks: whose blocks they are: claude
    codex: NotRequired[PlanLimits | None]  # blocks: Codex's own limit windows


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
    codex: PlanLimits | None
    agents: list[AgentToday]
