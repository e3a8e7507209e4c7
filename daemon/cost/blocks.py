"""Claude's 5-hour billing blocks, as ccusage draws them, with the active block's burn rate, its
projection to the block's end, and how much of a limit it uses.

A block starts at the hour (UTC) of the first call after a quiet spell, and takes every call
until five hours after that start; a call five hours or more after the block's start, or after
the call before it, starts the next block at its own hour. A block is active while it has not
ended and its last call was less than five hours ago.

Blocks are drawn from the usage projection's buckets (quarters of an hour, each with the times
of its first and last call): a block ends on an hour, so a bucket is all in a block or all
after it, and the quiet spell before a bucket is from the last call of the bucket before, to
the microsecond; blocks from buckets are the blocks of the calls.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from daemon.cost.tally import Groups, Tally, breakdown_json, model_names, totals_json
from store.errors import UsageError
from store.events import format_ts
from store.usage import UsageRow

HOUR_US = 3600 * 1_000_000
BLOCK_US = 5 * HOUR_US
MINUTE_US = 60 * 1_000_000


@dataclass(slots=True)
class Block:
    """One block: its start (an hour) and end, its calls' first and last times, its rows."""

    start: int
    first_ts: int
    last_ts: int
    rows: list[UsageRow] = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.start + BLOCK_US

    def active(self, now: int) -> bool:
        return now < self.end and now - self.last_ts < BLOCK_US

    @property
    def label(self) -> str:
        return format_ts(self.start)


def draw_blocks(rows: Iterable[UsageRow]) -> list[Block]:
    """The blocks of ``rows``, oldest first."""
    blocks: list[Block] = []
    for row in sorted(rows, key=lambda r: (r.bucket, r.first_ts)):
        block = blocks[-1] if blocks else None
        if block is None or row.first_ts - block.start >= BLOCK_US or row.first_ts - block.last_ts >= BLOCK_US:
            block = Block(row.first_ts - row.first_ts % HOUR_US, row.first_ts, row.last_ts)
            blocks.append(block)
        block.rows.append(row)
        block.first_ts = min(block.first_ts, row.first_ts)
        block.last_ts = max(block.last_ts, row.last_ts)
    return blocks


@dataclass(frozen=True, slots=True)
class Limits:
    """A block's token and cost limits (None: none), as given or taken from the largest block."""

    tokens: int | None = None
    cost: float | None = None

    @classmethod
    def of(cls, tokens: int | str | None, cost: float | str | None, ended: list[Tally]) -> Limits:
        def read(value: Any, name: str, largest: float) -> Any:
            if value is None:
                return None
            if value == "max":
                return largest or None
            if isinstance(value, str):
                try:
                    value = float(value)
                except ValueError:
                    raise UsageError(
                        f"{name} must be a number or max, got {value!r}", f"e.g. --{name} 500000"
                    ) from None
            if value <= 0:
                raise UsageError(f"{name} must be above 0, got {value!r}", "leave it out for no limit")
            return value

        most_tokens = max((t.total_tokens for t in ended), default=0)
        most_cost = max((float(t.cost) for t in ended), default=0.0)
        token_limit = read(tokens, "token-limit", most_tokens)
        return cls(None if token_limit is None else int(token_limit), read(cost, "cost-limit", most_cost))

    def to_json(self) -> dict[str, Any]:
        return {"token_limit": self.tokens, "cost_limit": self.cost}


def _pct(value: float | None, limit: float | None) -> float | None:
    return None if value is None or not limit else round(100 * value / limit, 1)


def block_json(block: Block, tally: Tally, now: int, limits: Limits) -> dict[str, Any]:
    """A block's document: its times and counts; for the active one its burn rate, what it will
    have used at its end at that rate, and the share of the limits used and projected."""
    active = block.active(now)
    document: dict[str, Any] = {
        "start": format_ts(block.start),
        "end": format_ts(block.end),
        "first_ts": format_ts(block.first_ts),
        "last_ts": format_ts(block.last_ts),
        "active": active,
        "remaining_minutes": round((block.end - now) / MINUTE_US, 1) if active else None,
    } | tally.to_json()
    document["models"] = model_names(tally.models)
    cost = tally.cost_usd
    burn = projection = None
    minutes = (block.last_ts - block.first_ts) / MINUTE_US
    if active and minutes > 0:
        burn = {
            "tokens_per_minute": round(tally.total_tokens / minutes, 1),
            "cost_per_hour": None if cost is None else round(cost / minutes * 60, 6),
        }
        left = (block.end - now) / MINUTE_US
        projection = {
            "total_tokens": round(tally.total_tokens + tally.total_tokens / minutes * left),
            "cost_usd": None if cost is None else round(cost + cost / minutes * left, 6),
        }
    document["burn_rate"] = burn
    document["projection"] = projection
    projected_tokens = None if projection is None else projection["total_tokens"]
    projected_cost = None if projection is None else projection["cost_usd"]
    document["limits"] = limits.to_json() | {
        "token_pct": _pct(tally.total_tokens, limits.tokens),
        "projected_token_pct": _pct(projected_tokens, limits.tokens),
        "cost_pct": _pct(cost, limits.cost),
        "projected_cost_pct": _pct(projected_cost, limits.cost),
    }
    return document


def active_tally(block: Block, groups: Groups) -> Tally:
    """The tally of one block."""
    for row in block.rows:
        groups.add(block.label, row)
    return groups.tallies().labels[block.label]


def blocks_document(blocks: list[Block], groups: Groups, now: int, tokens: Any, cost: Any) -> dict[str, Any]:
    """The rows, totals and limits of a blocks report; the limits ``max`` read from the ended
    blocks."""
    for block in blocks:
        for row in block.rows:
            groups.add(block.label, row)
    tallied = groups.tallies()
    ended = [tallied.labels[b.label] for b in blocks if not b.active(now)]
    limits = Limits.of(tokens, cost, ended)
    lines = []
    for block in blocks:
        line = block_json(block, tallied.labels[block.label], now, limits)
        if groups.breakdown:
            line["breakdown"] = breakdown_json(groups, tallied.models[block.label])
        lines.append(line)
    return {"now": format_ts(now), "limits": limits.to_json(), "rows": lines, "totals": totals_json(tallied.total)}
