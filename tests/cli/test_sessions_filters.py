"""`toka sessions` filters (--since, --until, --source, --project), tables whose ids are never
cut or wrapped, and times in the local zone (named in the header) or in UTC with --utc."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from cli_support import invoke, toka

from daemon.client.sync import Client
from toka_cli.commands.sessions import _listed
from toka_cli.output import console
from toka_cli.render import short_ts, zone

LONG = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"


def seed() -> None:
    """Three sessions: two of Claude Code in two projects, one of Codex, a day apart each."""
    sessions = [
        ("c-app", "claude-code", "/home/me/src/app", "2026-02-10T10:00:00Z", "2026-02-10T11:00:00Z"),
        ("c-lib", "claude-code", "/home/me/src/lib", "2026-02-11T10:00:00Z", "2026-02-11T11:00:00Z"),
        ("x-app", "codex", "/home/me/src/app/api", "2026-02-12T10:00:00Z", "2026-02-12T11:00:00Z"),
    ]
    with Client() as client:
        for name, source, cwd, first, last in sessions:
            client.append(
                [
                    {"session": name, "kind": "session.meta", "ts": first, "payload": {"source": source, "cwd": cwd}},
                    {"session": name, "kind": "message", "ts": last, "payload": {"role": "user", "text": "hi"}},
                ]
            )


def listed(*args: str) -> list[str]:
    result = invoke("sessions", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return sorted(s["session"] for s in json.loads(result.stdout)["sessions"])


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), ["c-app", "c-lib", "x-app"]),
        (("--source", "codex"), ["x-app"]),
        (("--source", "Claude-Code"), ["c-app", "c-lib"]),
        (("--project", "/home/me/src/app"), ["c-app", "x-app"]),  # the folder and under it
        (("--project", "lib"), ["c-lib"]),  # a folder's name
        (("--since", "2026-02-11T10:30:00Z"), ["c-lib", "x-app"]),  # active since: c-lib ended after
        (("--until", "2026-02-11T10:00:00Z"), ["c-app"]),  # started before
        (("--since", "2026-02-11T00:00:00Z", "--until", "2026-02-12T00:00:00Z", "--source", "claude-code"), ["c-lib"]),
    ],
)
def test_the_filters_choose_the_sessions(args: tuple[str, ...], expected: list[str]) -> None:
    seed()
    assert listed(*args) == expected


def test_a_bad_time_is_a_usage_error() -> None:
    result = invoke("sessions", "--since", "next tuesday")
    assert result.exit_code == 2 and "cannot read --since 'next tuesday' as a time" in result.stderr


def _rendered(width: int, sessions: list[dict[str, Any]]) -> str:
    out = console()
    out.file, out.width = io.StringIO(), width
    try:
        _listed({"sessions": sessions})  # type: ignore[typeddict-item]
        return out.file.getvalue()
    finally:
        console.cache_clear()


@pytest.mark.parametrize("width", [80, 100, 120])
def test_a_session_id_is_never_cut_or_wrapped(width: int) -> None:
    session = {
        "session": LONG,
        "source": "claude-code",
        "project": "/home/someone/projects/spotter-worktrees/spotter-a0y",
        "model": "claude-opus-4-6",
        "fill_pct": 38.2,
        "events": 2292,
        "last_ts": "2026-02-12T16:17:55.000000Z",
    }
    text = _rendered(width, [session, {**session, "session": LONG[:-1] + "7"}])
    rows = [line for line in text.splitlines() if line.startswith(LONG[:8])]
    assert [row.split()[0] for row in rows] == [LONG, LONG[:-1] + "7"]


def test_at_80_columns_ids_are_shortened_before_any_other_column_gives_way() -> None:
    session = {
        "session": LONG,
        "source": "claude-code",
        "project": "/home/someone/projects/spotter",
        "model": "claude-opus-4-6",
        "fill_pct": 38.2,
        "events": 2292,
        "last_ts": "2026-02-12T16:17:55.000000Z",
    }
    other = {**session, "session": "019a2b3c-4d5e-6f70-8192-a3b4c5d6e7f8", "model": "gpt-5.3-codex"}
    lines = _rendered(80, [session, other]).splitlines()
    assert max(len(line) for line in lines) <= 80 and len(lines) == 3  # a line a row: nothing wrapped
    assert lines[0].split() == ["session", "source", "project", "model", "fill", "events", "last", f"({zone()})"]
    assert lines[1].split()[:6] == ["fa812bfe", "claude-code", "…/spotter", "claude-opus-4-6", "38%", "2292"]
    assert lines[2].split()[:4] == ["019a2b3c", "claude-code", "…/spotter", "gpt-5.3-codex"]
    assert lines[1].endswith(short_ts(session["last_ts"])[5:16])  # to the minute, the year left out
    wide = _rendered(200, [session, other]).splitlines()
    assert [line.split()[0] for line in wide[1:]] == [LONG, other["session"]]


def test_a_shortened_id_names_its_session() -> None:
    with Client() as client:
        for name in (LONG, "019a2b3c-4d5e-6f70-8192-a3b4c5d6e7f8"):
            client.record(name, "message", {"role": "user", "text": "hi"})
    shown = toka("sessions", env={"COLUMNS": "80"}).stdout  # a pipe: ids whole
    assert LONG in shown
    assert invoke_json_ok("show", LONG[:8])["session"] == LONG


def invoke_json_ok(*args: str) -> Any:
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_times_are_local_with_the_zone_named_or_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    seed()
    kolkata = toka("sessions", env={"TZ": "Asia/Kolkata"}).stdout
    assert "last (IST)" in kolkata and "2026-02-12 16:30:00" in kolkata  # 11:00 UTC
    utc = toka("--utc", "sessions", env={"TZ": "Asia/Kolkata"}).stdout
    assert "last (UTC)" in utc and "2026-02-12 11:00:00" in utc
    replay = toka("replay", "x-app", env={"TZ": "Asia/Kolkata"}).stdout
    assert replay.startswith("2026-02-12 15:30:00 #")  # session.meta at 10:00 UTC


def test_a_session_known_from_its_hooks_alone_has_its_project_and_source() -> None:
    """So that `toka mcp` finds a live session by its directory before any import has run."""
    with Client() as client:
        client.append(
            [
                {"session": "live", "kind": "hook.session_start", "payload": {"session_id": "live", "cwd": "/w/app"}},
                {"session": "turns", "kind": "hook.agent_turn_complete", "payload": {"thread-id": "t", "cwd": "/w/x"}},
            ]
        )
    found = {
        s["session"]: (s["source"], s["project"]) for s in json.loads(invoke("sessions", "--json").stdout)["sessions"]
    }
    assert found == {"live": ("claude-code", "/w/app"), "turns": ("codex", "/w/x")}


def test_a_handoff_or_a_note_today_leaves_an_old_session_in_its_place() -> None:
    seed()
    before = json.loads(invoke("sessions", "--json").stdout)["sessions"]
    assert [s["session"] for s in before] == ["x-app", "c-lib", "c-app"]

    noted = invoke("note", "c-app", "decision", "keep the old parser")
    assert noted.exit_code == 0, noted.stderr
    handed = invoke("handoff", "create", "c-app", "--json")
    assert handed.exit_code == 0, handed.stderr

    after = json.loads(invoke("sessions", "--json").stdout)["sessions"]
    assert [s["session"] for s in after] == ["x-app", "c-lib", "c-app"]
    old = next(s for s in after if s["session"] == "c-app")
    assert old["last_ts"] == "2026-02-10T11:00:00.000000Z"
    assert old["events"] > 2  # the note and the handoff are in it, they just are not its activity
    assert listed("--since", "2026-02-11T00:00:00Z") == ["c-lib", "x-app"]


def test_sessions_and_show_carry_each_sessions_usage_and_cost() -> None:
    opus = {"model": "claude-opus-4-6", "input_tokens": 1000, "output_tokens": 4000}  # $5 / $25 per million
    with Client() as client:
        client.append(
            [
                {"session": "paid", "kind": "usage", "agent": "main", "payload": opus, "ts": "2026-02-10T10:00:00Z"},
                {"session": "paid", "kind": "usage", "agent": "sub", "payload": opus, "ts": "2026-02-11T10:00:00Z"},
                {"session": "talk", "kind": "message", "payload": {"role": "user", "text": "hi"}},
            ]
        )
    expected = {"calls": 2, "input_tokens": 2000, "output_tokens": 8000, "cache_creation_tokens": 0,
                "cache_creation_1h_tokens": 0, "cache_read_tokens": 0, "total_tokens": 10_000,
                "telemetry_calls": 0, "cost_usd": 0.21, "unpriced_calls": 0}  # fmt: skip
    listed = {s["session"]: s["usage"] for s in json.loads(invoke("sessions", "--json").stdout)["sessions"]}
    assert listed["paid"] == expected
    assert listed["talk"]["calls"] == 0 and listed["talk"]["total_tokens"] == 0
    assert json.loads(invoke("show", "paid", "--json").stdout)["usage"] == expected
    report = json.loads(invoke("report", "session", "--json").stdout)
    assert [(r["session"], r["cost_usd"]) for r in report["rows"]] == [("paid", expected["cost_usd"])]
    assert "10,000 tokens in 2 calls, $0.21" in invoke("show", "paid").stdout
