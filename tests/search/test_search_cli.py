"""`toka search` and `toka recall` through Typer's runner, against an autostarted daemon: the words'
search, its tables, JSON, filters and syntax. The daemons here run without semantic recall, whose
hits would otherwise join these once the embedder has caught up, at a moment no test chooses;
search by meaning through the CLI is tested in test_recall_daemon.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text
from transcripts import shared_or_skip
from typer.testing import CliRunner, Result

from daemon.client.sync import Client
from store.search import MARK_END, MARK_START
from toka_cli.commands import search as search_command
from toka_cli.main import app


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


@pytest.fixture(autouse=True)
def words_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKA_RECALL_SEMANTIC", "false")


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
    assert header.split() == ["seq", "time", "(UTC)", "session", "kind", "matched", "snippet"]  # the zone of the times
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


def test_a_malformed_fts_query_is_a_usage_error_with_a_hint(recorded: None) -> None:
    result = invoke("search", "--fts", '"login')
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: cannot read the search query")
    assert lines[1].startswith("hint: put words with punctuation in double quotes")
    assert "leave out --fts" in lines[1]


def test_fts_syntax_is_opt_in(recorded: None) -> None:
    assert invoke("search", "login OR make").stdout == "no event matches 'login OR make'\n"
    found = json.loads(invoke("search", "--fts", "login OR make", "--json").stdout)
    assert len(found["hits"]) == 4
    assert invoke("search", '"login').exit_code == 0  # a stray quote is a character like any other


def test_paths_and_hyphenated_names_are_searched_as_written(tmp_path: Path) -> None:
    source = shared_or_skip("fixtures", "transcripts", "claude", "marot__8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
    path = tmp_path / source.name  # the session alone, without its subagents' files
    shutil.copyfile(source, path)
    assert invoke("import", str(path)).exit_code == 0
    for text in ("tmux-waiting.sh", "lib/spotter/services/tmux.ex"):
        result = invoke("search", text, "--json")
        assert result.exit_code == 0, result.stderr
        hits = json.loads(result.stdout)["hits"]
        assert hits and all(f"{MARK_START}{text}{MARK_END}" in hit["snippet"] for hit in hits[:5]), text
    missing = invoke("search", "src/auth/client.py")
    assert (missing.exit_code, missing.stdout) == (0, "no event matches 'src/auth/client.py'\n")


def test_recall_table_and_json(recorded: None) -> None:
    result = invoke("recall", "login", "--session", "auth-1")
    assert result.exit_code == 0, result.stderr
    header, *rows = result.stdout.splitlines()
    assert header.split() == ["why", "seq", "time", "(UTC)", "session", "kind", "matched", "snippet"]
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


def test_a_star_alone_under_fts_says_what_is_wrong_with_the_query(recorded: None) -> None:
    result = invoke("search", "--fts", "*")
    assert result.exit_code == 2, result.stderr
    lines = result.stderr.splitlines()
    assert lines == [
        "error: cannot read the search query '*': a * must follow a word: it makes the word a prefix (`migrat*`)",
        lines[1],
    ]
    assert lines[1].startswith("hint: put words with punctuation in double quotes") and "leave out --fts" in lines[1]
