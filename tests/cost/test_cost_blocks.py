"""5-hour billing blocks: drawn from the usage buckets exactly as from the calls, the active block's
burn rate and projection, limits and their share, and the active block found however long the
run of blocks before it."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from daemon.core import Core
from daemon.cost.blocks import BLOCK_US, HOUR_US, Limits, block_json, draw_blocks
from daemon.cost.prices import PriceTable
from daemon.cost.report import ReportRequest
from daemon.cost.service import Costs
from daemon.cost.tally import Groups, Tally
from daemon.paths import resolve_paths
from daemon.sections import SECTIONS
from store.ephemeral import EphemeralStore
from store.errors import UsageError
from store.events import NewEvent, format_ts
from store.usage import fold_usage, usage_row

T0 = 1_778_400_000_000_000  # 2026-05-10T08:00:00Z
MINUTE = 60_000_000
OPUS = {"model": "claude-opus-4-6", "input_tokens": 100, "cache_read_tokens": 10_000, "output_tokens": 500}


def rows_of(times: list[int]) -> list:  # type: ignore[type-arg]
    return fold_usage(usage_row(ts, "s", "main", OPUS) for ts in times)


def blocks_of_calls(times: list[int]) -> list[tuple[int, int, int, int]]:
    """ccusage's rule, call by call: (start, first call, last call, calls) of each block."""
    blocks: list[list[int]] = []
    for ts in sorted(times):
        if not blocks or ts - blocks[-1][0] >= BLOCK_US or ts - blocks[-1][2] >= BLOCK_US:
            blocks.append([ts - ts % HOUR_US, ts, ts, 0])
        blocks[-1][2] = ts
        blocks[-1][3] += 1
    return [(start, first, last, calls) for start, first, last, calls in blocks]


def test_a_block_starts_at_the_hour_and_lasts_five_hours() -> None:
    times = [T0 + 42 * MINUTE, T0 + 4 * HOUR_US + 59 * MINUTE, T0 + 5 * HOUR_US + 1 * MINUTE]
    blocks = draw_blocks(rows_of(times))
    assert [(b.start, b.end) for b in blocks] == [(T0, T0 + BLOCK_US), (T0 + BLOCK_US, T0 + 2 * BLOCK_US)]
    assert [sum(r.calls for r in b.rows) for b in blocks] == [2, 1]


def test_five_quiet_hours_start_a_new_block_at_the_next_calls_hour() -> None:
    times = [T0, T0 + 10 * MINUTE, T0 + 10 * MINUTE + BLOCK_US + 25 * MINUTE]
    blocks = draw_blocks(rows_of(times))
    assert [b.start for b in blocks] == [T0, T0 + 5 * HOUR_US]


@pytest.mark.parametrize("seed", range(20))
def test_blocks_from_buckets_are_the_blocks_of_the_calls(seed: int) -> None:
    rng = random.Random(seed)
    times, ts = [], T0
    for _ in range(200):
        ts += rng.choice((rng.randrange(1, 20 * MINUTE), rng.randrange(4 * HOUR_US, 6 * HOUR_US)))
        times.append(ts)
    drawn = [(b.start, b.first_ts, b.last_ts, sum(r.calls for r in b.rows)) for b in draw_blocks(rows_of(times))]
    assert drawn == blocks_of_calls(times)


def tally_of(rows: list, prices: PriceTable) -> Tally:  # type: ignore[type-arg]
    groups = Groups(prices)
    for row in rows:
        groups.add("b", row)
    return groups.tallies().labels["b"]


def test_the_active_blocks_burn_rate_projection_and_limits() -> None:
    times = [T0 + 10 * MINUTE, T0 + 70 * MINUTE]  # one hour apart
    [block] = draw_blocks(rows_of(times))
    tally = tally_of(block.rows, PriceTable())
    now = T0 + 2 * HOUR_US  # three hours left
    document = block_json(block, tally, now, Limits(tokens=100_000, cost=1.0))
    cost = 2 * (100 * 5 + 10_000 * 0.5 + 500 * 25) / 1e6  # $0.036
    assert (document["active"], document["remaining_minutes"], document["total_tokens"]) == (True, 180.0, 21_200)
    assert document["burn_rate"] == {"tokens_per_minute": round(21_200 / 60, 1), "cost_per_hour": round(cost, 6)}
    assert document["projection"] == {"total_tokens": 21_200 + 21_200 * 3, "cost_usd": round(cost * 4, 6)}
    assert document["limits"] == {
        "token_limit": 100_000,
        "cost_limit": 1.0,
        "token_pct": 21.2,
        "projected_token_pct": 84.8,
        "cost_pct": round(100 * cost, 1),
        "projected_cost_pct": round(400 * cost, 1),
    }


def test_an_ended_block_has_no_burn_rate() -> None:
    [block] = draw_blocks(rows_of([T0, T0 + MINUTE]))
    document = block_json(block, tally_of(block.rows, PriceTable()), T0 + 6 * HOUR_US, Limits())
    assert (document["active"], document["burn_rate"], document["projection"]) == (False, None, None)


def test_max_limits_are_the_largest_ended_block() -> None:
    small, large = Tally(calls=1, input_tokens=10), Tally(calls=1, input_tokens=900)
    large.cost += 2
    limits = Limits.of("max", "max", [small, large])
    assert (limits.tokens, limits.cost) == (900, 2.0)
    assert Limits.of(None, None, [large]) == Limits()
    with pytest.raises(UsageError) as caught:
        Limits.of("lots", None, [])
    assert "token-limit must be a number or max" in caught.value.message
    with pytest.raises(UsageError):
        Limits.of(-5, None, [])


def test_the_active_block_is_found_after_days_of_blocks_without_a_pause(tmp_path: Path) -> None:
    """A call every two hours for three days: no five quiet hours, so each block starts at the
    first call after the one before it ended, and the active one depends on the first call of
    all; reading back one day would put it elsewhere."""
    times = [T0 + 7 * MINUTE + n * 2 * HOUR_US for n in range(36)]
    now = times[-1] + 30 * MINUTE
    store = EphemeralStore()

    async def run() -> tuple[int, int] | None:
        await store.append([NewEvent("s", "usage", OPUS, "main", ts) for ts in times])
        costs = Costs(Core(store, store.append, SECTIONS.defaults(), resolve_paths(), lambda: now / 1_000_000))
        found = await costs.active_block()
        return None if found is None else (found[0].start, found[1].calls)

    expected = blocks_of_calls(times)[-1]
    assert asyncio.run(run()) == (expected[0], expected[3])
    assert expected[0] % HOUR_US == 0 and expected[0] != (times[-1] - times[-1] % HOUR_US)


def test_claudes_blocks_hold_claudes_usage_and_codex_its_own_windows() -> None:
    """Codex's usage is not drawn into Claude's 5-hour blocks: its limits are the windows its
    rate_limits readings give, with their use, reset, burn rate and when they run out."""
    read = T0 + 30 * MINUTE
    limits = {
        "limit_id": "codex",
        "primary": {"used_percent": 80.0, "window_minutes": 300, "resets_at": (read + 2 * HOUR_US) // 1_000_000},
        "secondary": {"used_percent": 60.0, "window_minutes": 10080, "resets_in_seconds": 86_400},
        "plan_type": "plus",
    }
    gpt = {"model": "gpt-5.3-codex", "input_tokens": 5000, "cached_input_tokens": 4000, "output_tokens": 300}
    store = EphemeralStore()

    async def run() -> dict:  # type: ignore[type-arg]
        await store.append(
            [
                NewEvent("claude", "session.meta", {"source": "claude-code"}, "main", T0),
                NewEvent("claude", "usage", OPUS, "main", T0 + MINUTE),
                NewEvent("cx", "session.meta", {"source": "codex"}, "main", T0),
                NewEvent("cx", "usage", gpt | {"rate_limits": limits}, "main", read),
            ]
        )
        now = (read + HOUR_US) / 1_000_000
        costs = Costs(Core(store, store.append, SECTIONS.defaults(), resolve_paths(), lambda: now))
        return await costs.report(ReportRequest("blocks", timezone="UTC"))

    report = asyncio.run(run())
    [block] = report["rows"]
    assert (report["plan"], block["calls"], block["models"]) == ("claude", 1, ["claude-opus-4-6"])
    assert report["totals"]["calls"] == 1
    codex = report["codex"]
    assert (codex["session"], codex["as_of"], codex["plan_type"]) == ("cx", format_ts(read), "plus")
    primary, secondary = codex["windows"]
    # 80% used three hours into five: 26.67%/h, so the rest goes in 45 minutes, before the reset.
    assert primary == {
        "name": "primary",
        "window_minutes": 300,
        "used_pct": 80.0,
        "resets_at": format_ts(read + 2 * HOUR_US),
        "reset": False,
        "burn_pct_per_hour": 26.67,
        "runs_out_at": format_ts(read + 45 * MINUTE),
    }
    # 60% used six days into seven: 0.42%/h, which lasts past the reset a day later.
    assert secondary == {
        "name": "secondary",
        "window_minutes": 10080,
        "used_pct": 60.0,
        "resets_at": format_ts(read + 24 * HOUR_US),
        "reset": False,
        "burn_pct_per_hour": 0.42,
        "runs_out_at": None,
    }
