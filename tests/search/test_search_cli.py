"""`toka search` and `toka recall` through Typer's runner, against an autostarted daemon."""

from __future__ import annotations

import json

import pytest
from rich.console import Console
from rich.text import Text
from typer.testing import CliRunner, Result

from daemon.client.sync import Client
from store.search import MARK_END, MARK_START
from toka_cli.commands import search as search_command
from toka_cli.main import app


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def recorded() -> None:
    with Client() as client:
        client.append(
            [
                {"session": "auth-1", "kind": "message", "agent": "main", "payload": {"text": "the login times out"}},
                {"session": "auth-1", "kind": "tool.call", "payload": {"tool": "Bash", "input": {"command": "make"}}},
                {"session": "auth-1", "kind": "compression", "payload": {"summary": "login retries tried"}},
                {"session": "deploy", "kind": "tool.result", "agent": "ops", "payload": {"output": "login ok"}},
            ]
        )


def test_search_prints_a_table_with_marked_matches_in_a_pipe(recorded: None) -> None:
    result = invoke("search", "login")
    assert result.exit_code == 0, result.stderr
    header, *rows = result.stdout.splitlines()
    assert header.split() == ["seq", "time", "session", "kind", "snippet"]
    assert len(rows) == 3
    assert all(f"{MARK_START}login{MARK_END}" in row for row in rows)


def test_search_json_and_filters(recorded: None) -> None:
    result = invoke("search", "login", "--session", "auth", "--kind", "message", "--json", "--limit", "5")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert list(document) == ["hits"]
    assert [(hit["seq"], hit["session"], hit["kind"]) for hit in document["hits"]] == [(1, "auth-1", "message")]
    by_agent = json.loads(invoke("search", "login", "--agent", "ops", "--json").stdout)
    assert [hit["seq"] for hit in by_agent["hits"]] == [4]
    since = json.loads(invoke("search", "login", "--since", "1h", "--json").stdout)
    assert len(since["hits"]) == 3


def test_search_says_when_nothing_matches(recorded: None) -> None:
    result = invoke("search", "zebra")
    assert result.exit_code == 0
    assert result.stdout == "no event matches 'zebra'\n"


def test_a_malformed_query_is_a_usage_error(recorded: None) -> None:
    result = invoke("search", '"login')
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: cannot read the search query")
    assert lines[1].startswith("hint: put words with punctuation in double quotes")


def test_recall_table_and_json(recorded: None) -> None:
    result = invoke("recall", "login", "--session", "auth-1")
    assert result.exit_code == 0, result.stderr
    header, *rows = result.stdout.splitlines()
    assert header.split() == ["why", "seq", "time", "session", "kind", "snippet"]
    assert [row.split()[0] for row in rows] == ["recent", "recent", "summary", "match"]
    document = json.loads(invoke("recall", "login", "--session", "auth-1", "--json", "--limit", "2").stdout)
    assert set(document) == {"query", "session", "items"}
    assert [item["why"] for item in document["items"]] == ["recent", "summary"]
    assert invoke("recall", "login").exit_code == 2  # --session is required


def test_highlights_are_bold_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = Console(force_terminal=True, color_system="standard")
    monkeypatch.setattr(search_command, "console", lambda: terminal)
    shown = search_command.highlighted(f"the {MARK_START}login{MARK_END}\ntimes out")
    assert isinstance(shown, Text)
    assert shown.plain == "the login times out"
    assert [(shown.plain[span.start : span.end], span.style) for span in shown.spans] == [("login", "bold")]
    monkeypatch.setenv("NO_COLOR", "1")
    plain = Console(force_terminal=True, color_system=None)
    monkeypatch.setattr(search_command, "console", lambda: plain)
    assert search_command.highlighted(f"the {MARK_START}login{MARK_END}") == f"the {MARK_START}login{MARK_END}"
