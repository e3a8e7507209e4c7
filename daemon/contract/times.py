"""The one grammar of the times people give: every ``--since`` and ``--until``, a report's days,
and the MCP server's time arguments read through ``moment``.

The forms: an age counted back from now (``30m``, ``2h``, ``7d``, ``2w``, ``3mo``, ``1y``, also
``3 days ago``, ``an hour ago``, ``last week``, ``last 3 days``), ``now``, ``today`` and
``yesterday`` (their midnight), a weekday (``monday``, ``last friday``: the midnight of the latest
one, today included), ``this week`` / ``this month`` / ``this year`` (their first midnight), and
dates and times (ISO-8601 ``2026-12-01T14:00:00Z``, ``2026-12-01``, ``20261201``,
``2026-12-01 14:00``). A date or time without an offset is read in the zone given (the local one
when None), as a person typed it.

No library reads all of these without a heavy import (dateparser loads its language data at
start-up; dateutil reads no ages): this is a handful of regular expressions on the stdlib, cheap
enough for every command's start-up.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from store.errors import UsageError

TIME_FORMS = (
    "an age (30m, 2h, 7d, 2w), a date or time (2026-12-01, '2026-12-01 14:00', ISO-8601),"
    " today, yesterday, monday, or words: '3 days ago', 'last week'"
)
_UNITS = {
    "s": "seconds", "sec": "seconds", "secs": "seconds", "second": "seconds", "seconds": "seconds",
    "m": "minutes", "min": "minutes", "mins": "minutes", "minute": "minutes", "minutes": "minutes",
    "h": "hours", "hr": "hours", "hrs": "hours", "hour": "hours", "hours": "hours",
    "d": "days", "day": "days", "days": "days",
    "w": "weeks", "wk": "weeks", "wks": "weeks", "week": "weeks", "weeks": "weeks",
    "mo": "months", "month": "months", "months": "months",
    "y": "years", "yr": "years", "yrs": "years", "year": "years", "years": "years",
}  # fmt: skip
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# "2h", "2.5 hours", "3 days ago", "a week ago", "last 3 days", "last week".
_AGE = re.compile(r"^(?:last\s+)?(\d{1,6}(?:\.\d+)?|an?|one)?\s*([a-z]+?)(?:\s+ago)?$")
# The longest age: past it the moment falls before the year 1.
_MAX_DAYS = 700_000


def moment(value: str, now: float, zone: tzinfo | None = None, argument: str = "time") -> datetime:
    """The moment ``value`` names, read at ``now`` (epoch seconds) in ``zone`` (the local zone when
    None), as an aware datetime; UsageError naming ``argument`` when it is none of the forms."""
    text = " ".join(value.strip().lower().split())
    current = datetime.fromtimestamp(now, UTC).astimezone(zone)
    found = _words(text, current, zone) if text else None
    if found is None:
        found = _iso(value.strip(), zone)
    if found is None:
        raise UsageError(f"cannot read {argument} {value!r} as a time", f"give {TIME_FORMS}")
    return found


def iso_utc(when: datetime) -> str:
    """``when`` as the daemon's requests carry a time: ISO-8601 in UTC, ``...Z``."""
    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")


def day_of(value: str, now: float, zone: tzinfo, argument: str = "day") -> date:
    """The day of ``zone`` that ``value`` falls in: a report's ``since`` and ``until``."""
    text = value.strip()
    if re.fullmatch(r"\d{4}-?\d{2}-?\d{2}", text):
        try:  # a date is that day, whatever the zone: no trip through midnight and back
            return date.fromisoformat(text)
        except ValueError:
            pass
    return moment(value, now, zone, argument).astimezone(zone).date()


def _midnight(on: date, zone: tzinfo | None) -> datetime:
    return _local(datetime.combine(on, time()), zone)


def _local(naive: datetime, zone: tzinfo | None) -> datetime:
    # The system's zone, with its offset on that day (summer or winter), when none is named.
    return naive.astimezone() if zone is None else naive.replace(tzinfo=zone)


def _words(text: str, current: datetime, zone: tzinfo | None) -> datetime | None:
    today = current.date()
    if text == "now":
        return current
    if text == "today":
        return _midnight(today, zone)
    if text == "yesterday":
        return _midnight(today - timedelta(days=1), zone)
    day_name = text.removeprefix("last ")
    if day_name in _WEEKDAYS:
        back = (today.weekday() - _WEEKDAYS.index(day_name)) % 7
        if text.startswith("last ") and back == 0:
            back = 7
        return _midnight(today - timedelta(days=back), zone)
    if text in ("this week", "this month", "this year"):
        start = {
            "this week": today - timedelta(days=today.weekday()),
            "this month": today.replace(day=1),
            "this year": today.replace(month=1, day=1),
        }[text]
        return _midnight(start, zone)
    age = _AGE.match(text)
    if age is None or age.group(2) not in _UNITS or (age.group(1) is None and not text.startswith("last ")):
        return None
    count = age.group(1)
    amount = 1.0 if count is None or count in ("a", "an", "one") else float(count)
    return _back(current, amount, _UNITS[age.group(2)])


def _back(current: datetime, amount: float, unit: str) -> datetime | None:
    if unit in ("months", "years"):
        months = round(amount * (12 if unit == "years" else 1))
        if months > _MAX_DAYS // 28:
            return None
        year, month = divmod(current.year * 12 + current.month - 1 - months, 12)
        if year < 1:
            return None
        day = min(current.day, _month_days(year, month + 1))
        return current.replace(year=year, month=month + 1, day=day)
    delta = timedelta(**{unit: amount}) if amount * _DAYS_PER[unit] <= _MAX_DAYS else None
    if delta is None:
        return None
    try:
        return current - delta
    except OverflowError:
        return None


_DAYS_PER = {"seconds": 1 / 86_400, "minutes": 1 / 1440, "hours": 1 / 24, "days": 1.0, "weeks": 7.0}


def _month_days(year: int, month: int) -> int:
    following = date(year + month // 12, month % 12 + 1, 1)
    return (following - timedelta(days=1)).day


def _iso(text: str, zone: tzinfo | None) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(re.sub(r"[zZ]$", "+00:00", text))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else _local(parsed, zone)
