"""`toka report daily|weekly|monthly|session`: the documented JSON, CSV and markdown, tables that fit
80 columns with ids whole, filters and time zones, unpriced models, and one-line errors."""

from __future__ import annotations

import csv
import io
import json
import select
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from cli_support import TOKA as TOKA_SCRIPT
from cli_support import assert_error, invoke, invoke_json, toka
from daemons import PATIENCE
from test_results import mismatches
from transcripts import shared_or_skip

from daemon.client.sync import Client
from daemon.contract import results_cost
from store.events import format_ts

# Two sessions of two agents on 2026-05-10 and 11 (UTC), a Codex one, and one of toka's own on a
# model nobody prices. Opus 4.6 is $5/$25 per million, $6.25 cache writes ($10 for an hour), $0.50
# reads; GPT-5.3 Codex $1.75/$14, $0.175 cached.
OPUS = {"model": "claude-opus-4-6", "input_tokens": 1000, "cache_creation_tokens": 2000,
        "cache_creation_1h_tokens": 1000, "cache_read_tokens": 100_000, "output_tokens": 4000}  # fmt: skip
CODEX = {"model": "gpt-5.3-codex", "input_tokens": 50_000, "cached_input_tokens": 40_000, "output_tokens": 2000}
HOUSE = {"model": "house-model-7", "input_tokens": 500, "output_tokens": 100}
OPUS_COST = (1000 * 5 + 1000 * 6.25 + 1000 * 10 + 100_000 * 0.5 + 4000 * 25) / 1e6  # 0.17125
CODEX_COST = (10_000 * 1.75 + 40_000 * 0.175 + 2000 * 14) / 1e6  # 0.0525


def seed() -> None:
    events = [
        {"session": "claude-1", "kind": "session.meta", "payload": {"source": "claude-code", "cwd": "/work/shop"},
         "ts": "2026-05-10T08:00:00Z"},
        {"session": "claude-1", "kind": "usage", "agent": "main", "payload": OPUS, "ts": "2026-05-10T08:00:00Z"},
        {"session": "claude-1", "kind": "usage", "agent": "a1b2c3", "payload": OPUS, "ts": "2026-05-10T23:30:00Z"},
        {"session": "codex-1", "kind": "session.meta",
         "payload": {"source": "codex", "cwd": "/work/api", "git": {"repository_url": "git@github.com:acme/api.git"}},
         "ts": "2026-05-11T09:00:00Z"},
        {"session": "codex-1", "kind": "usage", "agent": "main", "payload": CODEX, "ts": "2026-05-11T09:00:00Z"},
        {"session": "mine", "kind": "usage", "agent": "worker", "payload": HOUSE, "ts": "2026-05-11T10:00:00Z"},
    ]  # fmt: skip
    with Client() as client:
        client.append(events)


def report(*args: str) -> Any:
    return invoke_json("report", *args, "--timezone", "UTC")


def test_daily_json_is_the_documented_shape() -> None:
    seed()
    document = report("daily", "--since", "2026-05-10", "--until", "2026-05-11")
    assert mismatches(document, results_cost.Report) == []
    counts = {"calls": 2, "input_tokens": 2000, "output_tokens": 8000, "cache_creation_tokens": 4000,
              "cache_creation_1h_tokens": 2000, "cache_read_tokens": 200_000, "total_tokens": 214_000,
              "telemetry_calls": 0}  # fmt: skip
    assert document == {
        "report": "daily",
        "timezone": "UTC",
        "since": "2026-05-10",
        "until": "2026-05-11",
        "source": None,
        "project": None,
        "prices": {"table": "genai-prices 0.2.3", "config": []},
        "rows": [
            {"period": "2026-05-10", **counts, "cost_usd": round(2 * OPUS_COST, 6), "unpriced_calls": 0,
             "models": ["claude-opus-4-6"]},
            {"period": "2026-05-11", "calls": 2, "input_tokens": 10_500, "output_tokens": 2100,
             "cache_creation_tokens": 0, "cache_creation_1h_tokens": 0, "cache_read_tokens": 40_000,
             "total_tokens": 52_600, "telemetry_calls": 0, "cost_usd": CODEX_COST, "unpriced_calls": 1,
             "models": ["gpt-5.3-codex", "house-model-7"]},
        ],
        "totals": {"calls": 4, "input_tokens": 12_500, "output_tokens": 10_100, "cache_creation_tokens": 4000,
                   "cache_creation_1h_tokens": 2000, "cache_read_tokens": 240_000, "total_tokens": 266_600,
                   "telemetry_calls": 0, "cost_usd": round(2 * OPUS_COST + CODEX_COST, 6), "unpriced_calls": 1,
                   "models": ["claude-opus-4-6", "gpt-5.3-codex", "house-model-7"],
                   "unpriced_models": ["house-model-7"]},
    }  # fmt: skip


def test_session_json_has_source_project_and_agents() -> None:
    seed()
    document = report("session", "--breakdown")
    assert mismatches(document, results_cost.Report) == []
    rows = {row["session"]: row for row in document["rows"]}
    assert [row["session"] for row in document["rows"]] == ["claude-1", "codex-1", "mine"]  # by last activity
    shop = rows["claude-1"]
    assert (shop["source"], shop["project"], shop["first_ts"], shop["last_ts"]) == (
        "claude-code",
        "/work/shop",
        "2026-05-10T08:00:00.000000Z",
        "2026-05-10T23:30:00.000000Z",
    )
    assert [(a["agent"], a["calls"], a["cost_usd"]) for a in shop["agents"]] == [
        ("a1b2c3", 1, round(OPUS_COST, 6)),
        ("main", 1, round(OPUS_COST, 6)),
    ]
    assert shop["breakdown"][0]["priced_as"] == {"model": "claude-opus-4-6", "provider": "anthropic", "origin": "table"}
    assert (rows["mine"]["source"], rows["mine"]["cost_usd"], rows["mine"]["unpriced_calls"]) == ("toka", None, 1)
    assert rows["mine"]["breakdown"][0]["priced_as"] is None


def test_weekly_and_monthly_periods() -> None:
    seed()
    assert [r["period"] for r in report("weekly")["rows"]] == ["2026-05-04", "2026-05-11"]  # Mondays
    assert [(r["period"], r["calls"]) for r in report("monthly")["rows"]] == [("2026-05", 4)]


def test_the_time_zone_decides_the_day() -> None:
    seed()
    tokyo = invoke_json("report", "daily", "--timezone", "Asia/Tokyo")
    # 23:30 UTC on the 10th is 08:30 on the 11th in Tokyo
    assert [(r["period"], r["calls"]) for r in tokyo["rows"]] == [("2026-05-10", 1), ("2026-05-11", 3)]
    assert tokyo["timezone"] == "Asia/Tokyo"
    offset = invoke_json("report", "daily", "--timezone", "-05:00")
    assert (offset["timezone"], [r["period"] for r in offset["rows"]]) == ("UTC-05:00", ["2026-05-10", "2026-05-11"])


def test_filters_by_source_and_project() -> None:
    seed()
    assert report("daily", "--source", "codex")["totals"]["calls"] == 1
    assert report("daily", "--source", "toka")["totals"]["models"] == ["house-model-7"]
    assert report("daily", "--project", "/work")["totals"]["calls"] == 3  # both sessions under /work
    assert report("daily", "--project", "/work/shop")["totals"]["calls"] == 2
    assert report("daily", "--project", "shop")["totals"]["calls"] == 2  # the folder's name
    assert report("daily", "--project", "api")["totals"]["calls"] == 1  # the repository's name
    assert report("daily", "--project", "/work/sho")["totals"]["calls"] == 0  # not a folder of it


def test_since_and_until_take_words_and_ages() -> None:
    with Client() as client:
        client.append([{"session": "now", "kind": "usage", "payload": OPUS}])  # at the daemon's now
    assert invoke_json("report", "daily", "--since", "today")["totals"]["calls"] == 1
    assert invoke_json("report", "daily", "--since", "7d", "--until", "yesterday")["totals"]["calls"] == 0
    assert invoke_json("report", "daily", "--since", "1w")["totals"]["calls"] == 1


def test_config_prices_price_an_unknown_model(toka_home: Path) -> None:
    (toka_home / "config.toml").write_text('[models.prices."house-model"]\ninput = 2.0\noutput = 10.0\n')
    seed()
    document = report("session", "--since", "2026-05-11")
    mine = next(row for row in document["rows"] if row["session"] == "mine")
    assert (mine["cost_usd"], mine["unpriced_calls"]) == ((500 * 2 + 100 * 10) / 1e6, 0)
    assert document["prices"] == {"table": "genai-prices 0.2.3", "config": ["house-model"]}


def test_csv_has_a_row_per_period_and_model_and_the_totals() -> None:
    seed()
    result = invoke("report", "daily", "--timezone", "UTC", "--breakdown", "--format", "csv")
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [(r["period"], r["model"], r["calls"], r["cost_usd"]) for r in rows] == [
        ("2026-05-10", "claude-opus-4-6", "2", f"{2 * OPUS_COST:.6f}"),
        ("2026-05-11", "gpt-5.3-codex", "1", f"{CODEX_COST:.6f}"),
        ("2026-05-11", "house-model-7", "1", ""),
        ("total", "", "4", f"{2 * OPUS_COST + CODEX_COST:.6f}"),
    ]
    assert {r["price_table"] for r in rows} == {"genai-prices 0.2.3"}


def test_markdown_is_a_table_with_its_totals_and_price_table() -> None:
    seed()
    result = invoke("report", "monthly", "--timezone", "UTC", "--format", "markdown")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "**Monthly usage, time zone UTC**"
    assert lines[2].startswith("| period | calls | input_tokens |")
    assert lines[4].startswith("| 2026-05 | 4 | 12,500 | 10,100 |") and "$0.40*" in lines[4]
    assert lines[5].startswith("| **total** | 4 |")
    assert lines[-2:] == [
        "prices: genai-prices 0.2.3  ",
        "* 1 call of unpriced models (house-model-7): not in the cost",
    ]


def test_tables_fit_80_columns_with_session_ids_whole() -> None:
    seed()
    long_id = "4f65f198-0c0c-47a2-b6ab-5f2e30ae5cbe"
    with Client() as client:
        client.append([{"session": long_id, "kind": "usage", "payload": OPUS, "ts": "2026-05-12T10:00:00Z"}])
    for kind in ("daily", "weekly", "monthly", "session"):
        shown = toka("report", kind, "--breakdown", "--timezone", "UTC", env={"NO_COLOR": "1"})
        assert shown.returncode == 0, shown.stderr
        assert max(len(line) for line in shown.stdout.splitlines()) <= 80, shown.stdout
    assert long_id in shown.stdout
    assert "house-model-7" in shown.stdout and "unpriced" in shown.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--since", "next tuesday"), "cannot read --since 'next tuesday' as a time"),
        (("--since", "2026-05-12", "--until", "2026-05-01"), "since (2026-05-12) is after until (2026-05-01)"),
        (("--timezone", "Mars/Olympus"), "unknown time zone 'Mars/Olympus'"),
        (("--format", "xls"), "unknown format 'xls'"),
        (("--format", "csv", "--json"), "--json and --format are two outputs"),
    ],
)
def test_bad_input_is_one_line_with_a_hint_and_exit_2(args: tuple[str, ...], message: str) -> None:
    result = invoke("report", "daily", *args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert_error(result.stderr, contains=message)
    assert result.stdout == ""


def test_blocks_json_with_the_active_blocks_burn_rate_and_limits() -> None:
    now = time.time()
    with Client() as client:
        client.append(
            [{"session": "old", "kind": "usage", "payload": OPUS, "ts": "2026-05-10T08:10:00Z"}]
            + [{"session": "live", "kind": "usage", "payload": OPUS, "ts": now - minutes * 60} for minutes in (90, 30)]
        )
    document = invoke_json("report", "blocks", "--token-limit", "max", "--cost-limit", "1.5")
    assert mismatches(document, results_cost.Report) == []
    old, live = document["rows"]
    assert (old["start"], old["end"], old["active"], old["burn_rate"]) == (
        "2026-05-10T08:00:00.000000Z",
        "2026-05-10T13:00:00.000000Z",
        False,
        None,
    )
    assert document["limits"] == {"token_limit": old["total_tokens"], "cost_limit": 1.5}  # max: the largest ended
    assert (live["active"], live["calls"], live["limits"]["token_pct"]) == (True, 2, 200.0)
    assert live["burn_rate"]["tokens_per_minute"] == pytest.approx(2 * 107_000 / 60, abs=0.1)
    assert live["projection"]["total_tokens"] > live["total_tokens"]
    shown = toka("report", "blocks", "--cost-limit", "1.5", env={"NO_COLOR": "1"})
    assert shown.returncode == 0, shown.stderr
    assert "active block" in shown.stdout and "burn rate" in shown.stdout and "of $1.50" in shown.stdout
    assert max(len(line) for line in shown.stdout.splitlines()) <= 80


def test_a_bad_limit_is_one_line_with_a_hint_and_exit_2() -> None:
    result = invoke("report", "blocks", "--token-limit", "lots")
    assert result.exit_code == 2
    assert_error(result.stderr, contains="token-limit must be a number or max")


def test_live_blocks_print_a_summary_then_another_when_usage_comes() -> None:
    """`toka report blocks --live --json`: the daemon's cost.live stream as JSON lines, a new one
    after usage commits, from the subscription (no polling of files)."""
    with Client() as client:
        client.append([{"session": "a", "kind": "usage", "agent": "main", "payload": OPUS}])
    process = subprocess.Popen(
        [str(TOKA_SCRIPT), "report", "blocks", "--live", "--json", "--timezone", "UTC"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        first = json.loads(read_line(process))
        assert mismatches(first, results_cost.LiveSummary) == []
        assert (first["today"]["calls"], first["block"]["calls"], first["timezone"]) == (1, 1, "UTC")
        with Client() as client:
            client.append([{"session": "b", "kind": "usage", "agent": "main", "payload": CODEX}])
        second = json.loads(read_line(process))
        assert (second["today"]["calls"], second["block"]["calls"]) == (2, 2)
        assert sorted(a["session"] for a in second["agents"]) == ["a", "b"]
    finally:
        process.terminate()
        process.wait(10)


def read_line(process: subprocess.Popen[bytes]) -> bytes:
    """The next line the process prints, within the tests' patience."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], PATIENCE)
    assert ready, "no line within the deadline"
    return process.stdout.readline()


def test_an_empty_log_reports_nothing_and_costs_nothing() -> None:
    document = report("daily")
    assert document["rows"] == []
    assert (document["totals"]["calls"], document["totals"]["cost_usd"]) == (0, 0.0)
    assert json.loads(json.dumps(document)) == document


def test_breakdown_keeps_model_names_whole_on_one_line() -> None:
    with Client() as client:
        client.append(
            [
                {
                    "session": "s",
                    "kind": "usage",
                    "payload": {**OPUS, "model": "claude-sonnet-4-5-20250929"},
                    "ts": "2026-05-10T08:00:00Z",
                }
            ]  # fmt: skip
        )
    for kind in ("daily", "session"):
        shown = toka("report", kind, "--breakdown", "--timezone", "UTC", env={"NO_COLOR": "1"})
        assert shown.returncode == 0, shown.stderr
        models = [line.split()[0] for line in shown.stdout.splitlines() if "claude-sonnet" in line]
        assert models == ["claude-sonnet-4-5-20250929"], shown.stdout


def test_piped_tables_are_not_padded() -> None:
    seed()
    for args in (("report", "session", "--breakdown"), ("report", "daily"), ("sessions",), ("status",)):
        shown = toka(*args, env={"NO_COLOR": "1"})
        assert shown.returncode == 0, shown.stderr
        assert [line for line in shown.stdout.splitlines() if line.endswith(" ")] == [], args


def test_blocks_hold_claudes_usage_and_show_codexs_own_windows_from_its_rollout() -> None:
    rollout = shared_or_skip(
        "fixtures",
        "transcripts",
        "codex",
        "madshn__rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
    )
    claude = shared_or_skip("fixtures", "transcripts", "claude", "marot__short.jsonl")
    assert invoke("import", str(rollout), str(claude)).exit_code == 0
    # Codex's last reading, as the rollout's last token_count with usage holds it.
    readings = [json.loads(line)["payload"] for line in rollout.read_text().splitlines()]
    last = [p for p in readings if p.get("type") == "token_count" and p.get("info") and p.get("rate_limits")][-1]
    document = invoke_json("report", "blocks", "--since", "2026-01-01")
    assert mismatches(document, results_cost.Report) == []
    assert document["plan"] == "claude"
    assert {model for row in document["rows"] for model in row["models"]} == {"claude-opus-4-6"}
    codex = document["codex"]
    assert (codex["session"], codex["limit_id"]) == ("019c8a59-e9dd-71f0-9ae3-4079fe9726a9", "codex")
    windows = {w["name"]: w for w in codex["windows"]}
    for name in ("primary", "secondary"):
        raw = last["rate_limits"][name]
        assert (windows[name]["used_pct"], windows[name]["window_minutes"]) == (
            raw["used_percent"],
            raw["window_minutes"],
        )
        assert windows[name]["resets_at"] == format_ts(raw["resets_at"] * 1_000_000)
        assert windows[name]["reset"] is True  # February's windows have started over since
    shown = toka("report", "blocks", "--since", "2026-01-01", env={"NO_COLOR": "1"})
    assert shown.returncode == 0, shown.stderr
    five = next(line for line in shown.stdout.splitlines() if line.startswith("codex 5-hour"))
    assert "█" * 5 + "░" * 15 + "  25.0%" in five and "started over at 2026-02-24" in five
    assert max(len(line) for line in shown.stdout.splitlines()) <= 80
