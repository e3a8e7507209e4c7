"""Every --since and --until reads the one grammar of daemon/contract/times.py: `yesterday` on
sessions, events, search and alerts, an age in hours on report, words on all of them; and a time
none of the forms is one line naming them, exit 2."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time, timedelta

import pytest
from cli_support import invoke, invoke_json

from daemon.client.sync import Client


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def seed() -> None:
    """`old`: three days before yesterday's local midnight; `new`: an hour ago, or halfway since
    midnight in the day's first two hours, so that it is today whenever the test runs."""
    midnight = datetime.combine(date.today(), time()).astimezone()
    now = datetime.now(UTC)
    old = _iso(midnight - timedelta(days=4))
    new = _iso(now - min(timedelta(hours=1), (now - midnight) / 2))
    with Client() as client:
        client.append(
            [
                {"session": "old", "kind": "message", "ts": old, "payload": {"role": "user", "text": "kettle old"}},
                {"session": "new", "kind": "message", "ts": new, "payload": {"role": "user", "text": "kettle new"}},
                {
                    "session": "old",
                    "kind": "usage",
                    "agent": "main",
                    "ts": old,
                    "payload": {"model": "claude-opus-4-6", "input_tokens": 1000, "output_tokens": 10},
                },
                {
                    "session": "new",
                    "kind": "usage",
                    "agent": "main",
                    "ts": new,
                    "payload": {"model": "claude-opus-4-6", "input_tokens": 2000, "output_tokens": 20},
                },
            ]  # fmt: skip
        )


def events(*args: str) -> list[dict[str, object]]:
    """`toka events ARGS --json`: one event a line."""
    result = invoke("events", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.mark.parametrize("since", ["yesterday", "2 days ago", "last 2 days", "today"])
def test_sessions_events_and_search_take_words(since: str) -> None:
    seed()
    sessions = invoke_json("sessions", "--since", since)["sessions"]
    assert [s["session"] for s in sessions] == ["new"]
    assert len(events("new", "--since", since)) == 2
    assert events("old", "--since", since) == []
    hits = invoke_json("search", "kettle", "--since", since)["hits"]
    assert [h["session"] for h in hits] == ["new"]


def test_until_takes_the_same_words() -> None:
    seed()
    assert [s["session"] for s in invoke_json("sessions", "--until", "yesterday")["sessions"]] == ["old"]
    assert len(events("old", "--until", "2 days ago")) == 2
    assert events("new", "--until", "2 days ago") == []


def test_alerts_take_yesterday() -> None:
    invoke_json("alerts", "--test")
    assert [a["type"] for a in invoke_json("alerts", "--since", "yesterday")["alerts"]] == ["test"]
    assert invoke_json("alerts", "--since", "2099-01-01")["alerts"] == []


def test_report_takes_an_age_in_hours_and_words() -> None:
    seed()
    now = datetime.now()
    # The day each form starts on: yesterday for `2h` in the day's first two hours.
    days = {"2h": now - timedelta(hours=2), "today": now, "30 minutes ago": now - timedelta(minutes=30)}
    for since, day in days.items():
        document = invoke_json("report", "daily", "--since", since)
        assert document["since"] == day.date().isoformat()
        assert [row["total_tokens"] for row in document["rows"]] == [2020]
    assert invoke_json("report", "daily", "--since", "last week")["totals"]["total_tokens"] == 3030


@pytest.mark.parametrize(
    "args",
    [
        ("sessions", "--since", "soonish"),
        ("events", "new", "--until", "soonish"),
        ("search", "x", "--since", "soonish"),
        ("alerts", "--since", "soonish"),
        ("report", "daily", "--since", "soonish"),
    ],
)
def test_a_time_none_of_the_forms_is_one_line_with_the_forms_exit_2(args: tuple[str, ...]) -> None:
    result = invoke(*args)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("error: cannot read --") and "'soonish' as a time" in lines[0]
    assert lines[1].startswith("hint: give an age (30m, 2h, 7d, 2w)") and "yesterday" in lines[1]
    assert json.dumps(result.stdout) == '""'
