"""Each session's usage and cost, summed and priced as `toka report session` prices them: the
figures `toka sessions --json` and `toka show --json` carry (docs/json.md)."""

from __future__ import annotations

from typing import Any

from daemon.cost.prices import PriceTable
from daemon.cost.tally import Groups, Tally
from store.base import EventStore
from store.usage import DAY_US


async def session_usage(store: EventStore, prices: PriceTable, session: str | None = None) -> dict[str, Tally]:
    """Each session's tally (of ``session`` alone when given): one read of the usage projection
    summed per day, and a second per bucket only for models priced by the hour of the day."""
    rows = await store.usage_sums(width=DAY_US, sessions=True, session=session)
    by_hour = sorted({row.model for row in rows if (found := prices.find(row.model)) and found.by_hour})
    if by_hour:
        rows = [row for row in rows if row.model not in by_hour]
        rows += await store.usage_sums(sessions=True, session=session, models=by_hour)
    groups = Groups(prices)
    groups.add_all(rows, lambda row: row.session)
    return dict(groups.tallies().labels)


def usage_json(tally: Tally | None) -> dict[str, Any]:
    """A session's counts and cost (docs/json.md's Counts); zeros for a session without usage."""
    return (tally or Tally()).to_json()
