"""The point of the reports: on the real transcripts of the fixtures, toka's totals per day, per
session and per model equal an independent parse that deduplicates responses by message id and
request id (as ccusage does) and prices them with genai-prices itself (tests/cost/cost_reference.py);
subagents are counted once, in their parent session under their own agent; Codex is counted from
its token_count events without counting a cumulative total as usage."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from cost_reference import Call, Totals, claude_calls, codex_calls, local_day, totals_by
from daemons import Spawned, shared_daemon
from transcripts import shared_or_skip

from daemon.client.sync import Client
from daemon.client.transfer import import_files

COMPARED = ("calls", "input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens", "cost_usd")


def compared(row: dict[str, Any]) -> dict[str, Any]:
    return {name: row[name] for name in (*COMPARED, "unpriced_calls")}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Spawned, list[Call]]]:
    """The fixtures imported once, into a daemon of the module's own whose reports the tests only
    read, and the calls of the independent parse."""
    folder = shared_or_skip("fixtures", "transcripts")
    with shared_daemon(tmp_path_factory) as daemon:
        with daemon.client() as client:
            summary = import_files(client, [folder])
        assert not summary.bad_lines or all("not a format" in b.reason for b in summary.bad_lines)
        yield daemon, claude_calls(folder / "claude") + codex_calls(folder / "codex")


def report(kind: str, daemon: Spawned | None = None, **args: Any) -> dict[str, Any]:
    """The report from ``daemon``, or from this test's own (started if need be)."""
    with daemon.client() if daemon else Client() as client:
        found: dict[str, Any] = client.call("report", kind=kind, **args)
    return found


def test_totals_per_day_session_and_model_equal_an_independent_parse(imported: tuple[Spawned, list[Call]]) -> None:
    daemon, calls = imported
    zone = "America/Los_Angeles"  # days that are not UTC's: calls near midnight move
    daily = report("daily", daemon, timezone=zone, breakdown=True)
    expected_days = totals_by(calls, local_day(ZoneInfo(zone)))
    assert {row["period"]: compared(row) for row in daily["rows"]} == {
        day: totals.as_report() for day, totals in sorted(expected_days.items())
    }
    assert daily["timezone"] == zone and daily["prices"]["table"] == "genai-prices 0.2.3"

    sessions = report("session", daemon)
    expected_sessions = totals_by(calls, lambda call: call.session)
    assert {row["session"]: compared(row) for row in sessions["rows"]} == {
        session: totals.as_report() for session, totals in expected_sessions.items()
    }

    per_model: dict[str, Totals] = totals_by(calls, lambda call: call.model or "")
    reported: dict[str, dict[str, Any]] = defaultdict(lambda: dict.fromkeys((*COMPARED, "unpriced_calls"), 0))
    for row in daily["rows"]:
        for line in row["breakdown"]:
            for name in (*COMPARED, "unpriced_calls"):
                reported[line["model"] or ""][name] += line[name]
    assert {model: totals.calls for model, totals in per_model.items()} == {m: r["calls"] for m, r in reported.items()}
    for model, totals in per_model.items():
        expected = totals.as_report()
        got = reported[model]
        assert {k: got[k] for k in COMPARED if k != "cost_usd"} == {k: expected[k] for k in COMPARED if k != "cost_usd"}
        assert got["cost_usd"] == pytest.approx(expected["cost_usd"], abs=1e-5), model  # days rounded apart

    assert compared(daily["totals"])["calls"] == len(calls)
    assert daily["totals"]["cost_usd"] == pytest.approx(float(sum(t.cost for t in expected_days.values())), abs=1e-5)


def test_subagents_count_once_in_their_parent_session_under_their_own_agent(
    imported: tuple[Spawned, list[Call]],
) -> None:
    daemon, calls = imported
    session = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"  # marot's, with two subagents and a compaction agent
    [row] = [r for r in report("session", daemon)["rows"] if r["session"] == session]
    expected = totals_by([c for c in calls if c.session == session], lambda call: call.agent)
    assert len(expected) >= 3
    assert {a["agent"]: (a["calls"], a["output_tokens"]) for a in row["agents"]} == {
        agent: (t.calls, t.output) for agent, t in expected.items()
    }
    assert row["calls"] == sum(t.calls for t in expected.values())


def test_codex_is_counted_from_token_counts_without_its_cumulative_totals(imported: tuple[Spawned, list[Call]]) -> None:
    rows = report("session", imported[0], source="codex")["rows"]
    codex = codex_calls(shared_or_skip("fixtures", "transcripts", "codex"))
    assert {r["session"] for r in rows} == {c.session for c in codex}
    compacted = "019c8a59-e9dd-71f0-9ae3-4079fe9726a9"  # its compaction writes a bogus 940,499 total
    [row] = [r for r in rows if r["session"] == compacted]
    # the rollout's own last cumulative total: every call once, none of the cumulative counts
    assert (row["input_tokens"] + row["cache_read_tokens"], row["cache_read_tokens"], row["output_tokens"]) == (
        33_810_485,
        31_621_504,
        133_999,
    )


def test_a_response_that_grew_after_an_interrupted_import_is_counted_once(tmp_path: Path) -> None:
    """The file is imported while its first response has one record of three (3 output tokens),
    then again whole (623): the response counts once, with its whole output, at its price."""
    source = shared_or_skip("fixtures", "transcripts", "claude", "codemie-ai__session-196820da.jsonl")
    folder = tmp_path / "claude"
    folder.mkdir()
    copy = folder / source.name
    lines = source.read_bytes().splitlines(keepends=True)
    copy.write_bytes(b"".join(lines[:7]))
    with Client() as client:
        import_files(client, [copy])
        copy.write_bytes(b"".join(lines))
        import_files(client, [copy])
        events = client.call("events.query", session="196820da", kinds=["usage"], limit=5000)["events"]
    assert [e["payload"]["output_tokens"] for e in events if e["payload"].get("revision")] == [620]
    [row] = report("session")["rows"]
    [expected] = totals_by(claude_calls(folder), lambda call: call.session).values()
    assert compared(row) == expected.as_report()
