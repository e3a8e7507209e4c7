"""Days as reports read them: time zones by name and offset, --since/--until words and ages, and a
range cut where a zone's offset changes (each part's days exact)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from daemon.contract.times import day_of
from daemon.cost.periods import Periods, day_range, offsets, time_zone
from store.errors import UsageError

HOUR = 3_600_000_000
JAN_1 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z
NOW = JAN_1 + 100 * 24 * HOUR


def test_zones_by_name_and_by_offset() -> None:
    assert time_zone(None)[1] == "UTC" and time_zone("Etc/UTC")[1] == "UTC"
    assert time_zone("Europe/Paris")[1] == "Europe/Paris"
    zone, name = time_zone("+05:30")
    assert name == "UTC+05:30" and zone.utcoffset(None).total_seconds() == 5.5 * 3600  # type: ignore[union-attr]
    assert time_zone("-0800")[1] == "UTC-08:00"
    for bad in ("Mars/Olympus", "+05:20", "+15:00"):
        with pytest.raises(UsageError):
            time_zone(bad)


def test_days_by_date_word_and_age() -> None:
    today = date(2026, 5, 11)
    noon = datetime(2026, 5, 11, 12, tzinfo=UTC).timestamp()
    assert day_of("2026-05-01", noon, UTC, "since") == date(2026, 5, 1)
    assert day_of("20260501", noon, UTC, "since") == date(2026, 5, 1)
    assert day_of("today", noon, UTC, "since") == today
    assert day_of("Yesterday", noon, UTC, "since") == date(2026, 5, 10)
    assert day_of("7d", noon, UTC, "since") == date(2026, 5, 4)
    assert day_of("2w", noon, UTC, "since") == date(2026, 4, 27)
    assert day_of("last week", noon, UTC, "since") == date(2026, 5, 4)
    assert day_of("13h", noon, UTC, "since") == date(2026, 5, 10)
    with pytest.raises(UsageError) as caught:
        day_of("some day", noon, UTC, "until")
    assert caught.value.message == "cannot read until 'some day' as a time" and "3 days ago" in (
        caught.value.hint or ""
    )


def test_a_range_is_whole_days_of_the_zone() -> None:
    zone, _ = time_zone("Asia/Tokyo")
    found = day_range("2026-01-02", "2026-01-02", zone, NOW / 1e6)
    assert (found.start, found.end) == (JAN_1 + 24 * HOUR - 9 * HOUR, JAN_1 + 48 * HOUR - 9 * HOUR)


def test_the_range_is_cut_where_daylight_saving_time_changes() -> None:
    zone, _ = time_zone("Europe/Paris")
    year_end = JAN_1 + 365 * 24 * HOUR
    parts = offsets(zone, JAN_1, year_end, NOW)
    march = int(datetime(2026, 3, 29, 1, tzinfo=UTC).timestamp() * 1e6)
    october = int(datetime(2026, 10, 25, 1, tzinfo=UTC).timestamp() * 1e6)
    assert parts == [(JAN_1, march, HOUR), (march, october, 2 * HOUR), (october, year_end, HOUR)]
    assert offsets(time_zone("+05:30")[0], None, None, NOW) == [(None, None, 5 * HOUR + HOUR // 2)]
    open_ended = offsets(zone, None, None, NOW)
    assert open_ended[0][0] is None and open_ended[-1][1] is None


def test_periods_of_a_bucket() -> None:
    zone, _ = time_zone("America/New_York")
    late = JAN_1 + 3 * HOUR  # 22:00 on 2025-12-31 in New York
    assert Periods("daily", zone).of(late) == "2025-12-31"
    assert Periods("weekly", zone).of(late) == "2025-12-29"  # a Monday
    assert Periods("monthly", zone).of(late) == "2025-12"
