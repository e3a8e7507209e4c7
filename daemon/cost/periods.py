"""Time as reports read it: the time zone, the days ``since`` and ``until`` name, and the day, week
or month a quarter of an hour of usage falls in.

A report's range is whole days of its time zone: ``since`` is the first day counted, ``until``
the last. Each is any time of daemon/contract/times.py, read as the day it falls in: a date
(``2026-05-01`` or ``20260501``), ``today``, ``yesterday``, or an age (``7d``: the day seven days
before today; ``2h``: the day two hours ago). A time
zone is an IANA name (``Europe/Paris``), ``UTC``, or an offset from UTC in whole quarters of an
hour (``+05:30``); every one of them starts its days on the edge of a usage bucket
(store/usage.py), so days read from buckets are exact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from daemon.contract.times import day_of
from store.errors import UsageError
from store.usage import BUCKET_US

PERIODS = ("daily", "weekly", "monthly")
ZONE_HINT = "an IANA name such as Europe/Paris, UTC, or an offset such as +02:00"
_OFFSET = re.compile(r"^(?:utc|gmt)?([+-])(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)
MICROSECONDS = 1_000_000
# How far apart a zone's offset is looked at for changes (no zone changes its offset twice in a
# week), and where to look when a report's range is open: from 1970 to a year from now.
_STEP_US = 7 * 86_400 * MICROSECONDS
_AHEAD_US = 366 * 86_400 * MICROSECONDS


def time_zone(name: str | None) -> tuple[tzinfo, str]:
    """The zone ``name`` names, and the name tables show for it; UTC when None."""
    if name is None or name.strip().upper() in ("", "UTC", "Z", "GMT", "ETC/UTC"):
        return UTC, "UTC"
    offset = _OFFSET.match(name.strip())
    if offset:
        sign, hours, minutes = offset.group(1), int(offset.group(2)), int(offset.group(3) or 0)
        delta = timedelta(hours=hours, minutes=minutes)
        if minutes % 15 or minutes >= 60 or delta > timedelta(hours=14):
            raise UsageError(f"time zone offset {name!r} is not a whole quarter of an hour up to 14h", ZONE_HINT)
        delta = -delta if sign == "-" else delta
        shown = f"UTC{sign}{hours:02d}:{minutes:02d}"
        return timezone(delta, shown), shown
    try:
        return ZoneInfo(name.strip()), name.strip()
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"unknown time zone {name!r}", ZONE_HINT) from None


@dataclass(frozen=True, slots=True)
class Range:
    """The days a report covers (either end open when None) and the same as UTC microseconds:
    ``start`` inclusive, ``end`` exclusive."""

    since: date | None
    until: date | None
    start: int | None
    end: int | None

    def to_json(self) -> dict[str, str | None]:
        return {
            "since": None if self.since is None else self.since.isoformat(),
            "until": None if self.until is None else self.until.isoformat(),
        }


def day_range(since: str | None, until: str | None, zone: tzinfo, now: float) -> Range:
    """The range from ``since`` to ``until`` (inclusive days of ``zone``), read at ``now``."""
    first = None if since is None else day_of(since, now, zone, "since")
    last = None if until is None else day_of(until, now, zone, "until")
    if first is not None and last is not None and first > last:
        raise UsageError(
            f"since ({first.isoformat()}) is after until ({last.isoformat()})", "give the earlier day as since"
        )
    start = None if first is None else midnight(first, zone)
    end = None if last is None else midnight(last + timedelta(days=1), zone)
    return Range(first, last, start, end)


def midnight(on: date, zone: tzinfo) -> int:
    """The start of day ``on`` in ``zone``, as UTC microseconds."""
    return round(datetime(on.year, on.month, on.day, tzinfo=zone).timestamp() * MICROSECONDS)


class Periods:
    """The period (``daily``: 2026-05-11; ``weekly``: the Monday it starts on; ``monthly``:
    2026-05) of each bucket, in one zone; remembered per bucket, which many rows share."""

    def __init__(self, period: str, zone: tzinfo) -> None:
        self.period = period
        self.zone = zone
        self._seen: dict[int, str] = {}

    def of(self, bucket: int) -> str:
        label = self._seen.get(bucket)
        if label is None:
            local = datetime.fromtimestamp(bucket / MICROSECONDS, self.zone).date()
            if self.period == "weekly":
                local -= timedelta(days=local.weekday())
            label = f"{local.year:04d}-{local.month:02d}" if self.period == "monthly" else local.isoformat()
            self._seen[bucket] = label
        return label


def _offset(zone: tzinfo, at: int) -> int:
    shift = datetime.fromtimestamp(at / MICROSECONDS, zone).utcoffset() or timedelta(0)
    return round(shift.total_seconds() * MICROSECONDS)


def offsets(zone: tzinfo, start: int | None, end: int | None, now: int) -> list[tuple[int | None, int | None, int]]:
    """The range from ``start`` to ``end`` (UTC microseconds; None: open) cut where ``zone``'s
    offset from UTC changes, each part with its offset: within a part, the zone's days are
    ``(t + offset) // day``. Changes fall on bucket edges (offsets are whole quarters of an hour)."""
    if not isinstance(zone, ZoneInfo):
        return [(start, end, _offset(zone, now))]
    low = 0 if start is None else start
    high = now + _AHEAD_US if end is None else end
    changes = []
    at, current = low, _offset(zone, low)
    while at < high:
        ahead = min(at + _STEP_US, high)
        if _offset(zone, ahead) != current:
            before, after = at, ahead  # the change is in (before, after]: find its bucket edge
            while after - before > BUCKET_US:
                middle = before + (after - before) // 2
                before, after = (before, middle) if _offset(zone, middle) != current else (middle, after)
            edge = after - after % BUCKET_US
            edge = edge if _offset(zone, edge) != current else edge + BUCKET_US
            changes.append(edge)
            current = _offset(zone, edge)
            at = edge
        else:
            at = ahead
    edges: list[int | None] = [start, *changes, end]
    return [(first, edges[i + 1], _offset(zone, low if first is None else first)) for i, first in enumerate(edges[:-1])]
