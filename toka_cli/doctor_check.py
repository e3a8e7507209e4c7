"""What each of `toka doctor`'s checks returns, and the checks both database backends share."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any, Literal

Status = Literal["ok", "warning", "problem"]

# How far in the future an event or the daemon's clock may be before it counts as wrong:
# more than NTP's usual corrections, less than any real clock error worth a look.
CLOCK_SKEW_US = 60_000_000


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def newest_event(newest: str | None, newest_ts: int | None) -> Check:
    """The newest event must not be dated in the future (beyond CLOCK_SKEW_US)."""
    if newest is None or newest_ts is None:
        return Check("clock", "ok", "no events yet")
    ahead = newest_ts - time.time_ns() // 1000
    if ahead > CLOCK_SKEW_US:
        return Check(
            "clock",
            "problem",
            f"the newest event is dated {newest}, {ahead / 1e6:.0f} s in the future:"
            " this clock is behind, or the clock that wrote it was ahead",
            "timedatectl set-ntp true",
        )
    return Check("clock", "ok", f"the newest event ({newest}) is not in the future")
