"""The one time grammar (daemon/contract/times.py): every form it reads, at a fixed now, and the
one-line error naming the forms."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from daemon.contract.times import day_of, iso_utc, moment
from store.errors import UsageError

# Wednesday 2026-12-09, 15:30 UTC.
NOW = datetime(2026, 12, 9, 15, 30, tzinfo=UTC).timestamp()
PARIS = ZoneInfo("Europe/Paris")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30m", "2026-12-09T15:00:00Z"),
        ("2h", "2026-12-09T13:30:00Z"),
        ("7d", "2026-12-02T15:30:00Z"),
        ("2w", "2026-11-25T15:30:00Z"),
        ("90s", "2026-12-09T15:28:30Z"),
        ("1.5h", "2026-12-09T14:00:00Z"),
        ("3mo", "2026-09-09T15:30:00Z"),
        ("1y", "2025-12-09T15:30:00Z"),
        ("3 days ago", "2026-12-06T15:30:00Z"),
        ("3 Days  Ago", "2026-12-06T15:30:00Z"),
        ("an hour ago", "2026-12-09T14:30:00Z"),
        ("a week ago", "2026-12-02T15:30:00Z"),
        ("last week", "2026-12-02T15:30:00Z"),
        ("last 3 days", "2026-12-06T15:30:00Z"),
        ("last month", "2026-11-09T15:30:00Z"),
        ("now", "2026-12-09T15:30:00Z"),
        ("today", "2026-12-09T00:00:00Z"),
        ("yesterday", "2026-12-08T00:00:00Z"),
        ("monday", "2026-12-07T00:00:00Z"),
        ("wednesday", "2026-12-09T00:00:00Z"),
        ("last wednesday", "2026-12-02T00:00:00Z"),
        ("this week", "2026-12-07T00:00:00Z"),
        ("this month", "2026-12-01T00:00:00Z"),
        ("2026-12-01", "2026-12-01T00:00:00Z"),
        ("20261201", "2026-12-01T00:00:00Z"),
        ("2026-12-01 14:00", "2026-12-01T14:00:00Z"),
        ("2026-12-01T14:00:00Z", "2026-12-01T14:00:00Z"),
        ("2026-12-01T14:00:00+02:00", "2026-12-01T12:00:00Z"),
    ],
)
def test_every_form_read_at_a_fixed_now_in_utc(text: str, expected: str) -> None:
    assert iso_utc(moment(text, NOW, UTC)) == expected


def test_a_time_without_an_offset_is_read_in_the_zone_given() -> None:
    assert iso_utc(moment("2026-12-01 14:00", NOW, PARIS)) == "2026-12-01T13:00:00Z"
    assert iso_utc(moment("today", NOW, PARIS)) == "2026-12-08T23:00:00Z"
    assert iso_utc(moment("2026-07-01", NOW, PARIS)) == "2026-06-30T22:00:00Z"  # summer time
    assert iso_utc(moment("2026-12-01T14:00:00Z", NOW, PARIS)) == "2026-12-01T14:00:00Z"


def test_a_time_without_a_zone_is_local_when_none_is_given() -> None:
    local = datetime(2026, 12, 1, 14, 0).astimezone()
    assert moment("2026-12-01 14:00", NOW) == local


def test_a_day_is_the_day_of_the_zone_the_time_falls_in() -> None:
    tokyo = timezone(timedelta(hours=9))
    assert day_of("2026-12-01", NOW, tokyo).isoformat() == "2026-12-01"
    assert day_of("2h", NOW, UTC).isoformat() == "2026-12-09"
    assert day_of("16h", NOW, UTC).isoformat() == "2026-12-08"
    assert day_of("today", NOW, tokyo).isoformat() == "2026-12-10"  # 00:30 on the 10th in Tokyo
    assert day_of("3 days ago", NOW, UTC).isoformat() == "2026-12-06"


@pytest.mark.parametrize("text", ["", "soon", "2x", "week", "last", "2026-13-01", "99999999y", "3 days from now"])
def test_anything_else_is_a_usage_error_naming_the_forms(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        moment(text, NOW, UTC, "--since")
    assert caught.value.message == f"cannot read --since {text!r} as a time"
    assert caught.value.hint is not None and "\n" not in caught.value.hint
    for form in ("30m", "2026-12-01", "yesterday", "3 days ago"):
        assert form in caught.value.hint
    assert caught.value.exit_code == 2
