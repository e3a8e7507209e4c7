"""The memory pool on its own: a MemoryPool driven by a hand-moved clock, its pressure levels and
its health."""

from __future__ import annotations

from typing import Any

import pytest
from pool_support import Clock, make

from daemon.memory.pool import MAX_KEY_CHARS, MemoryPool, size_bucket
from daemon.memory.pressure import REJECTION_WINDOW, Crossing, pressure_level
from daemon.memory.settings import DEFAULT_CAPACITY, DEFAULT_SWEEP_S
from store.errors import Conflict, NotFound, UsageError

# ------------------------------------------------------------------------------------------------
# Defaults and levels


def test_defaults_are_64_mib_and_five_seconds() -> None:
    assert DEFAULT_CAPACITY == 64 * 1024 * 1024
    assert DEFAULT_SWEEP_S == 5.0
    assert MemoryPool().capacity_bytes == DEFAULT_CAPACITY


def test_pressure_levels_start_at_75_and_90_percent() -> None:
    assert pressure_level(74, 100) == "ok"
    assert pressure_level(75, 100) == "warning"
    assert pressure_level(89, 100) == "warning"
    assert pressure_level(90, 100) == "critical"
    assert pressure_level(100, 100) == "critical"


def test_size_buckets_are_powers_of_two() -> None:
    assert [size_bucket(n) for n in (0, 1, 2, 3, 64, 65, 1024, 1025)] == [0, 1, 2, 4, 64, 128, 1024, 2048]


def test_capacity_must_be_positive() -> None:
    with pytest.raises(UsageError):
        MemoryPool(0)


# ------------------------------------------------------------------------------------------------
# Put, get, delete


def test_put_then_get_returns_the_bytes_and_counts_a_hit(clock: Clock) -> None:
    pool = make(1000, clock)
    result = pool.put("notes/plan", b"step one", ttl=None)
    assert (result.stored, result.replaced, result.evicted, result.size) == (True, False, 0, 8)
    clock.advance(2)
    item = pool.get("notes/plan")
    assert (item.value, item.size, item.ttl_left, item.hits, item.age_s) == (b"step one", 8, None, 1, 2.0)
    assert item.created_us == 1_700_000_000_000_000


def test_put_replaces_and_frees_the_old_bytes(clock: Clock) -> None:
    pool = make(1000, clock)
    pool.put("k", b"x" * 300)
    result = pool.put("k", b"y" * 100)
    assert result.replaced
    assert pool.used_bytes == 100
    assert pool.get("k").value == b"y" * 100
    assert len(pool) == 1


def test_missing_key_is_not_found_and_counts_a_miss(clock: Clock) -> None:
    pool = make(1000, clock)
    with pytest.raises(NotFound):
        pool.get("nothing")
    assert pool.stats()["gets"] == {"hits": 0, "misses": 1}


def test_delete_says_whether_there_was_an_entry(clock: Clock) -> None:
    pool = make(1000, clock)
    pool.put("k", b"v")
    assert pool.delete("k") is True
    assert pool.delete("k") is False
    assert pool.used_bytes == 0
    assert pool.stats()["deletes"] == 1


@pytest.mark.parametrize("key", ["", 5, None, "k" * (MAX_KEY_CHARS + 1)])
def test_bad_keys_are_usage_errors(clock: Clock, key: Any) -> None:
    with pytest.raises(UsageError):
        make(1000, clock).put(key, b"v")


def test_a_key_of_1024_characters_is_accepted(clock: Clock) -> None:
    pool = make(1000, clock)
    pool.put("k" * MAX_KEY_CHARS, b"v")
    assert pool.get("k" * MAX_KEY_CHARS).value == b"v"


@pytest.mark.parametrize("ttl", [-1, "5", True, float("nan")])
def test_bad_ttls_are_usage_errors(clock: Clock, ttl: Any) -> None:
    with pytest.raises(UsageError):
        make(1000, clock).put("k", b"v", ttl)


def test_empty_values_are_values(clock: Clock) -> None:
    pool = make(10, clock)
    pool.put("empty", b"")
    assert pool.get("empty").value == b""
    assert pool.stats()["size_histogram"] == {"0": 1}


# ------------------------------------------------------------------------------------------------
# TTL


def test_ttl_zero_stores_nothing_retrievable(clock: Clock) -> None:
    pool = make(1000, clock)
    result = pool.put("gone", b"value", ttl=0)
    assert result.stored is False
    assert pool.used_bytes == 0 and len(pool) == 0
    with pytest.raises(NotFound):
        pool.get("gone")


def test_ttl_zero_over_an_existing_key_removes_its_value(clock: Clock) -> None:
    pool = make(1000, clock)
    pool.put("k", b"old")
    assert pool.put("k", b"new", ttl=0).replaced
    with pytest.raises(NotFound):
        pool.get("k")
    assert pool.used_bytes == 0


def test_entry_expires_when_its_ttl_has_passed(clock: Clock) -> None:
    pool = make(1000, clock)
    pool.put("k", b"v", ttl=10)
    clock.advance(9.5)
    assert pool.get("k").ttl_left == 0.5
    clock.advance(0.5)
    with pytest.raises(NotFound):
        pool.get("k")
    stats = pool.stats()
    assert stats["evictions"] == {"expired": 1, "lru": 0}
    assert stats["entries"] == 0 and stats["used_bytes"] == 0


def test_no_ttl_means_no_expiry(clock: Clock) -> None:
    pool = make(1000, clock)
    pool.put("k", b"v", ttl=None)
    clock.advance(10**9)
    assert pool.get("k").value == b"v"


def test_sweep_drops_only_expired_entries(clock: Clock) -> None:
    pool = make(1000, clock)
    pool.put("short", b"aa", ttl=1)
    pool.put("long", b"bbb", ttl=100)
    pool.put("forever", b"cccc")
    clock.advance(5)
    assert pool.sweep() == 1
    assert [i.key for i in pool.items()] == ["forever", "long"]
    assert pool.used_bytes == 7
    assert pool.sweep() == 0


def test_a_replaced_entry_keeps_only_its_new_ttl(clock: Clock) -> None:
    pool = make(1000, clock)
    pool.put("k", b"v1", ttl=1)
    pool.put("k", b"v2", ttl=None)
    clock.advance(5)
    assert pool.sweep() == 0
    assert pool.get("k").value == b"v2"


def test_deleting_an_expired_entry_is_no_delete(clock: Clock) -> None:
    pool = make(1000, clock)
    pool.put("k", b"v", ttl=1)
    clock.advance(1)
    assert pool.delete("k") is False
    assert pool.stats()["evictions"]["expired"] == 1 and pool.stats()["deletes"] == 0


def test_list_skips_expired_entries_and_filters_by_prefix(clock: Clock) -> None:
    pool = make(1000, clock)
    pool.put("a/1", b"x", ttl=1)
    pool.put("a/2", b"xx", ttl=60)
    pool.put("b/1", b"xxx")
    clock.advance(2)
    assert [(i.key, i.size, i.ttl_left) for i in pool.items("a/")] == [("a/2", 2, 58.0)]
    assert [i.key for i in pool.items()] == ["a/2", "b/1"]


# ------------------------------------------------------------------------------------------------
# Capacity and eviction


def test_a_value_of_exactly_the_capacity_fits(clock: Clock) -> None:
    pool = make(100, clock)
    pool.put("whole", b"x" * 100)
    assert pool.used_bytes == 100 and pool.fill_pct == 100.0


def test_puts_that_fill_the_pool_exactly_evict_nothing(clock: Clock) -> None:
    pool = make(100, clock)
    assert [pool.put(f"k{i}", b"x" * 25).evicted for i in range(4)] == [0, 0, 0, 0]
    assert pool.used_bytes == 100 and len(pool) == 4


def test_a_value_larger_than_the_pool_is_rejected_at_once(clock: Clock) -> None:
    pool = make(100, clock)
    pool.put("keep", b"x" * 60)
    with pytest.raises(Conflict) as raised:
        pool.put("huge", b"x" * 101)
    assert "larger than the whole pool" in raised.value.message
    assert raised.value.hint
    assert pool.get("keep").size == 60  # nothing was evicted for it
    assert pool.stats()["puts"] == {"accepted": 1, "rejected": 1}


def test_an_oversize_put_leaves_the_old_value_of_its_key(clock: Clock) -> None:
    pool = make(100, clock)
    pool.put("k", b"old")
    with pytest.raises(Conflict):
        pool.put("k", b"x" * 101)
    assert pool.get("k").value == b"old"


def test_least_recently_used_goes_first(clock: Clock) -> None:
    pool = make(100, clock)
    for key in ("a", "b", "c"):
        pool.put(key, b"x" * 30)
        clock.advance(1)
    pool.get("a")  # b is now the least recently used
    clock.advance(1)
    result = pool.put("d", b"x" * 30)
    assert result.evicted == 1
    assert sorted(i.key for i in pool.items()) == ["a", "c", "d"]
    assert pool.stats()["evictions"] == {"expired": 0, "lru": 1}


def test_equal_access_times_evict_the_oldest_created_first(clock: Clock) -> None:
    pool = make(100, clock)
    for key in ("first", "second", "third"):
        pool.put(key, b"x" * 30)
        clock.advance(1)
    # All three read at one instant: their access times tie, so creation decides.
    for key in ("third", "first", "second"):
        pool.get(key)
    pool.put("fourth", b"x" * 30)
    assert sorted(i.key for i in pool.items()) == ["fourth", "second", "third"]
    pool.put("fifth", b"x" * 30)
    assert sorted(i.key for i in pool.items()) == ["fifth", "fourth", "third"]


def test_with_a_frozen_clock_creation_order_decides(clock: Clock) -> None:
    pool = make(100, clock)
    for key in ("a", "b", "c"):
        pool.put(key, b"x" * 30)
    pool.get("a")
    pool.put("d", b"x" * 30)
    assert "a" not in pool and "b" in pool


def test_expired_entries_make_room_before_live_ones_are_evicted(clock: Clock) -> None:
    pool = make(100, clock)
    pool.put("old-live", b"x" * 40)
    clock.advance(1)
    pool.put("young-expiring", b"x" * 40, ttl=5)
    clock.advance(10)
    result = pool.put("new", b"x" * 40)
    assert result.evicted == 1
    assert sorted(i.key for i in pool.items()) == ["new", "old-live"]
    assert pool.stats()["evictions"] == {"expired": 1, "lru": 0}


def test_a_big_put_evicts_as_many_as_it_needs(clock: Clock) -> None:
    pool = make(100, clock)
    for i in range(10):
        pool.put(f"k{i}", b"x" * 10)
        clock.advance(1)
    assert pool.put("big", b"x" * 95).evicted == 10
    assert [i.key for i in pool.items()] == ["big"]


def test_many_accesses_keep_the_eviction_order(clock: Clock) -> None:
    pool = make(300, clock)
    for i in range(3):
        pool.put(f"k{i}", b"x" * 100)
    for n in range(1000):  # enough stale heap items to force a rebuild
        clock.advance(0.001)
        pool.get(f"k{n % 3}")
    # The last reads were k0 (n=999), k2 (n=998), k1 (n=997): k1 is the least recently used.
    pool.put("new", b"x" * 100)
    assert sorted(i.key for i in pool.items()) == ["k0", "k2", "new"]
    assert pool.stats()["gets"]["hits"] == 1000


# ------------------------------------------------------------------------------------------------
# Pressure and high water


def test_crossings_are_reported_in_order_up_and_down(clock: Clock) -> None:
    pool = make(100, clock)
    pool.put("a", b"x" * 50)
    assert pool.take_crossings() == []
    pool.put("b", b"x" * 30)  # 80%
    pool.put("c", b"x" * 15)  # 95%
    assert pool.take_crossings() == [Crossing("ok", "warning", 80, 100), Crossing("warning", "critical", 95, 100)]
    assert pool.take_crossings() == []
    pool.delete("c")  # 80%
    pool.delete("b")  # 50%
    assert pool.take_crossings() == [Crossing("critical", "warning", 80, 100), Crossing("warning", "ok", 50, 100)]


def test_a_jump_past_both_levels_is_one_crossing(clock: Clock) -> None:
    pool = make(100, clock)
    pool.put("big", b"x" * 95)
    pool.delete("big")
    assert pool.take_crossings() == [Crossing("ok", "critical", 95, 100), Crossing("critical", "ok", 0, 100)]


def test_expiry_crosses_levels_down(clock: Clock) -> None:
    pool = make(100, clock)
    pool.put("k", b"x" * 92, ttl=1)
    clock.advance(2)
    pool.sweep()
    assert [(c.from_level, c.to_level) for c in pool.take_crossings()] == [("ok", "critical"), ("critical", "ok")]
    assert pool.level == "ok"


def test_crossing_as_json_has_the_event_payload_shape() -> None:
    crossing = Crossing("ok", "warning", 80, 100)
    assert crossing.to_json() == {"from": "ok", "to": "warning", "used_bytes": 80, "capacity_bytes": 100}


def test_high_water_keeps_the_peak(clock: Clock) -> None:
    pool = make(100, clock)
    pool.put("a", b"x" * 70)
    pool.put("b", b"x" * 20)
    pool.delete("a")
    pool.put("c", b"x" * 5)
    stats = pool.stats()
    assert stats["high_water_bytes"] == 90
    assert stats["used_bytes"] == 25


# ------------------------------------------------------------------------------------------------
# Metrics and health


def test_metrics_agree_with_the_operations(clock: Clock) -> None:
    pool = make(100, clock)
    pool.put("a", b"x" * 40, ttl=5)  # bucket 64
    pool.put("b", b"x" * 40)  # bucket 64
    pool.put("c", b"x" * 3, ttl=0)  # accepted, stores nothing; bucket 4
    with pytest.raises(Conflict):
        pool.put("d", b"x" * 200)
    pool.get("b")
    pool.get("b")
    with pytest.raises(NotFound):
        pool.get("c")
    clock.advance(6)
    pool.put("e", b"x" * 30)  # fits without eviction: a still counts until swept
    pool.put("f", b"x" * 20)  # needs room: the expired a goes
    pool.put("g", b"x" * 50)  # needs room: b, the least recently used, goes
    pool.delete("e")
    stats = pool.stats()
    assert stats == {
        "capacity_bytes": 100,
        "used_bytes": 70,
        "free_bytes": 30,
        "fill_pct": 70.0,
        "level": "ok",
        "thresholds": {"warning_pct": 75, "critical_pct": 90},
        "high_water_bytes": 100,
        "entries": 2,
        "puts": {"accepted": 6, "rejected": 1},
        "gets": {"hits": 2, "misses": 1},
        "deletes": 1,
        "evictions": {"expired": 1, "lru": 1},
        "size_histogram": {"4": 1, "32": 2, "64": 3},
    }


def test_health_is_ok_for_an_idle_pool(clock: Clock) -> None:
    health = make(100, clock).health()
    assert health["level"] == "ok" and health["problems"] == []
    assert health["summary"] == "the pool is healthy"


def test_health_warns_near_capacity_and_is_critical_at_90(clock: Clock) -> None:
    pool = make(100, clock)
    pool.put("a", b"x" * 80)
    health = pool.health()
    assert health["level"] == "warning"
    assert [p["code"] for p in health["problems"]] == ["near_capacity"]
    assert "80% full" in health["summary"]
    pool.put("b", b"x" * 10)
    assert pool.health()["level"] == "critical"


def test_health_reports_many_rejections(clock: Clock) -> None:
    pool = make(100, clock)
    for i in range(9):
        pool.put(f"k{i}", b"x")
    with pytest.raises(Conflict):
        pool.put("huge", b"x" * 101)
    health = pool.health()
    assert health["level"] == "warning"  # 10% of the recent puts
    assert health["problems"][0]["code"] == "rejections"
    assert "1 of the last 10 puts were rejected" in health["summary"]
    for _ in range(8):
        with pytest.raises(Conflict):
            pool.put("huge", b"x" * 101)
    assert pool.health()["level"] == "critical"


def test_rejections_age_out_of_the_window(clock: Clock) -> None:
    pool = make(100, clock)
    for _ in range(20):
        with pytest.raises(Conflict):
            pool.put("huge", b"x" * 101)
    for i in range(REJECTION_WINDOW):
        pool.put(f"k{i % 5}", b"x")
    assert pool.health()["level"] == "ok"
    assert pool.stats()["puts"]["rejected"] == 20
