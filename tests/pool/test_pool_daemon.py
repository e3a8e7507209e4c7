"""The memory pool through a real daemon on a real socket, and through `toka pool`."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from daemons import Spawned, Spawner, shared_daemon
from typer.testing import CliRunner, Result

from store.errors import Conflict, NotFound, UsageError
from toka_cli.main import app

# A small pool and a quick sweeper, so that tests reach the levels and see expiry quickly.
SMALL = {"TOKA_POOL_CAPACITY_BYTES": "1000", "TOKA_POOL_SWEEP_S": "0.05"}


@pytest.fixture
def small(spawn: Spawner) -> Spawned:
    return spawn(env=SMALL)


@pytest.fixture(scope="module")
def shared_small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Spawned]:
    """One small pool for the table of bad puts, which store nothing (tests/conftest.py)."""
    with shared_daemon(tmp_path_factory, env=SMALL) as running:
        yield running


def call(daemon: Spawned, op: str, **args: Any) -> Any:
    with daemon.client() as client:
        return client.call(op, **args)


def invoke(*args: str, input: bytes | str | None = None) -> Result:
    return CliRunner().invoke(app, list(args), input=input)


def pressure_events(daemon: Spawned) -> list[dict[str, Any]]:
    page = call(daemon, "events.query", session="toka.pool", kinds=["pool.pressure"])
    return [e["payload"] for e in page["events"]]


# ------------------------------------------------------------------------------------------------
# Operations


def test_put_get_round_trips_text(small: Spawned) -> None:
    put = call(small, "pool.put", key="notes/plan", value="step one ✓", ttl=60)
    assert put == {
        "key": "notes/plan",
        "size": len("step one ✓".encode()),
        "stored": True,
        "replaced": False,
        "evicted": 0,
        "used_bytes": put["size"],
        "capacity_bytes": 1000,
        "level": "ok",
    }
    got = call(small, "pool.get", key="notes/plan")
    assert set(got) == {"key", "value", "size", "ttl_left", "created_ts", "hits"}
    assert (got["key"], got["value"], got["size"], got["hits"]) == ("notes/plan", "step one ✓", 12, 1)
    assert 59 < got["ttl_left"] <= 60
    assert got["created_ts"].endswith("Z")


def test_bytes_that_are_not_utf8_travel_as_base64(small: Spawned) -> None:
    data = bytes(range(256))
    call(small, "pool.put", key="bin", value_b64=base64.b64encode(data).decode(), ttl=None)
    got = call(small, "pool.get", key="bin")
    assert "value" not in got
    assert base64.b64decode(got["value_b64"]) == data and got["ttl_left"] is None


def test_missing_key_is_not_found(small: Spawned) -> None:
    with pytest.raises(NotFound):
        call(small, "pool.get", key="nothing")


def test_ttl_zero_stores_nothing(small: Spawned) -> None:
    assert call(small, "pool.put", key="k", value="v", ttl=0)["stored"] is False
    with pytest.raises(NotFound):
        call(small, "pool.get", key="k")


def test_delete_answers_whether_it_deleted(small: Spawned) -> None:
    call(small, "pool.put", key="k", value="v")
    assert call(small, "pool.delete", key="k") == {"deleted": True}
    assert call(small, "pool.delete", key="k") == {"deleted": False}


@pytest.mark.parametrize(
    "args",
    [
        {"key": "", "value": "v"},
        {"key": "k"},
        {"key": "k", "value": "v", "value_b64": "dg=="},
        {"key": "k", "value_b64": "not base64!"},
        {"key": "k", "value": 5},
        {"key": "k", "value": "v", "ttl": -1},
        {"key": "k", "value": "v", "ttl": "5"},
        {"key": "k" * 1025, "value": "v"},
    ],
)
def test_bad_puts_are_usage_errors(shared_small: Spawned, args: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        call(shared_small, "pool.put", **args)


def test_oversize_put_is_a_conflict_with_a_hint(small: Spawned) -> None:
    with pytest.raises(Conflict) as raised:
        call(small, "pool.put", key="big", value="x" * 1001)
    assert raised.value.hint
    assert call(small, "pool.stats")["puts"] == {"accepted": 0, "rejected": 1}


def test_list_shows_entries_without_values(small: Spawned) -> None:
    call(small, "pool.put", key="a/1", value="xx")
    call(small, "pool.put", key="a/2", value="yyy", ttl=100)
    call(small, "pool.put", key="b/1", value="z")
    listed = call(small, "pool.list", prefix="a/", limit=1)
    assert listed["total"] == 2 and listed["more"] is True
    (entry,) = listed["entries"]
    assert set(entry) == {"key", "size", "age", "ttl_left", "hits"}
    assert (entry["key"], entry["size"], entry["ttl_left"], entry["hits"]) == ("a/1", 2, None, 0)
    assert [e["key"] for e in call(small, "pool.list")["entries"]] == ["a/1", "a/2", "b/1"]


def test_lru_eviction_through_the_daemon(small: Spawned) -> None:
    for key in ("a", "b", "c"):
        call(small, "pool.put", key=key, value="x" * 300)
    call(small, "pool.get", key="a")
    assert call(small, "pool.put", key="d", value="x" * 300)["evicted"] == 1
    assert [e["key"] for e in call(small, "pool.list")["entries"]] == ["a", "c", "d"]
    assert call(small, "pool.stats")["evictions"] == {"expired": 0, "lru": 1}


def test_the_sweeper_drops_expired_entries(small: Spawned) -> None:
    call(small, "pool.put", key="k", value="v", ttl=0.1)
    deadline = time.monotonic() + 10
    while call(small, "pool.stats")["evictions"]["expired"] == 0:
        assert time.monotonic() < deadline, "the sweeper never dropped the expired entry"
        time.sleep(0.05)
    stats = call(small, "pool.stats")
    assert stats["entries"] == 0 and stats["sweeper"]["running"] is True and stats["sweeper"]["sweeps"] > 0


def test_stats_shape(small: Spawned) -> None:
    call(small, "pool.put", key="k", value="x" * 64)
    stats = call(small, "pool.stats")
    assert stats["size_histogram"] == {"64": 1}
    assert stats["thresholds"] == {"warning_pct": 75, "critical_pct": 90}
    assert set(stats) == {
        "capacity_bytes",
        "used_bytes",
        "free_bytes",
        "fill_pct",
        "level",
        "thresholds",
        "high_water_bytes",
        "entries",
        "puts",
        "gets",
        "deletes",
        "evictions",
        "size_histogram",
        "sweeper",
    }
    assert set(stats["sweeper"]) == {"running", "interval_s", "sweeps", "last_sweep_s"}


def test_default_capacity_is_64_mib(daemon: Spawned) -> None:
    assert call(daemon, "pool.stats")["capacity_bytes"] == 64 * 1024 * 1024


# ------------------------------------------------------------------------------------------------
# Pressure events and health


def test_crossings_are_recorded_as_pool_pressure_events(small: Spawned) -> None:
    call(small, "pool.put", key="a", value="x" * 800)
    call(small, "pool.put", key="b", value="x" * 150)
    call(small, "pool.delete", key="a")
    assert pressure_events(small) == [
        {"from": "ok", "to": "warning", "used_bytes": 800, "capacity_bytes": 1000},
        {"from": "warning", "to": "critical", "used_bytes": 950, "capacity_bytes": 1000},
        {"from": "critical", "to": "ok", "used_bytes": 150, "capacity_bytes": 1000},
    ]
    assert call(small, "pool.stats")["high_water_bytes"] == 950


def test_health_goes_from_ok_to_critical(small: Spawned) -> None:
    health = call(small, "pool.health")
    assert (health["level"], health["problems"], health["sweeper"]["running"]) == ("ok", [], True)
    call(small, "pool.put", key="a", value="x" * 950)
    health = call(small, "pool.health")
    assert health["level"] == "critical"
    assert health["problems"][0]["code"] == "near_capacity"
    assert "95% full" in health["summary"]


# ------------------------------------------------------------------------------------------------
# The command line


def test_cli_put_get_rm(small: Spawned) -> None:
    assert invoke("pool", "put", "greeting", "hello", "--ttl", "60").exit_code == 0
    got = invoke("pool", "get", "greeting")
    assert (got.exit_code, got.stdout_bytes) == (0, b"hello")
    document = json.loads(invoke("pool", "get", "greeting", "--json").stdout)
    assert document["value"] == "hello" and document["size"] == 5
    assert invoke("pool", "rm", "greeting").exit_code == 0
    gone = invoke("pool", "rm", "greeting")
    assert gone.exit_code == 3 and gone.stderr == "error: no pool entry greeting\n"
    missing = invoke("pool", "get", "greeting")
    assert missing.exit_code == 3 and "error:" in missing.stderr


def test_cli_put_from_stdin_keeps_the_bytes(small: Spawned) -> None:
    data = b"\x00\xffbinary\n"
    assert invoke("pool", "put", "blob", "-", input=data).exit_code == 0
    assert invoke("pool", "get", "blob").stdout_bytes == data
    document = json.loads(invoke("pool", "get", "blob", "--json").stdout)
    assert base64.b64decode(document["value_b64"]) == data


def test_cli_put_too_big_exits_6(small: Spawned) -> None:
    result = invoke("pool", "put", "big", "x" * 1001)
    assert result.exit_code == 6
    assert result.stderr.startswith("error: ") and "hint: " in result.stderr


def test_cli_list_and_stats(small: Spawned) -> None:
    invoke("pool", "put", "a", "1")
    invoke("pool", "put", "b", "22")
    listed = json.loads(invoke("pool", "list", "--json").stdout)
    assert [e["key"] for e in listed["entries"]] == ["a", "b"]
    table = invoke("pool", "list")
    assert table.exit_code == 0 and "a" in table.stdout and "b" in table.stdout
    stats = json.loads(invoke("pool", "stats", "--json").stdout)
    assert stats["entries"] == 2 and stats["used_bytes"] == 3
    shown = invoke("pool", "stats")
    assert shown.exit_code == 0 and "3 B of 1000 B" in shown.stdout


def test_cli_health_exit_codes(small: Spawned) -> None:
    ok = invoke("pool", "health")
    assert (ok.exit_code, ok.stdout.splitlines()[0]) == (0, "ok")
    invoke("pool", "put", "a", "x" * 800)
    warning = invoke("pool", "health")
    assert warning.exit_code == 0 and warning.stdout.startswith("warning")
    assert "needs attention" in warning.stderr
    invoke("pool", "put", "b", "x" * 150)
    critical = invoke("pool", "health", "--json")
    assert critical.exit_code == 1
    assert json.loads(critical.stdout)["level"] == "critical"
