"""`toka import` on bad input: good lines go in, bad ones are reported as file:line with a reason.

Exit code 1 when any line was skipped, 0 otherwise, 3 for a path that does not exist.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import EXAMPLE, EXAMPLE_SESSION, invoke, toka

LINES = EXAMPLE.read_bytes().splitlines(keepends=True)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in tmp_path, so that reported paths are the relative ones given on the command line."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _import_json(*paths: str, exit_code: int) -> dict:
    result = invoke("import", *paths, "--json")
    assert result.exit_code == exit_code, (result.stdout, result.stderr)
    return json.loads(result.stdout)


def _events() -> int:
    return json.loads(invoke("stats", "--json").stdout)["events"]


def test_a_folder_without_transcripts_imports_nothing_and_says_where_they_are(workdir: Path) -> None:
    Path("notes").mkdir()
    Path("notes/readme.txt").write_text("not a transcript")
    result = toka("import", "notes")
    assert result.returncode == 0
    assert result.stdout == "imported 0 new events (0 already present) into 0 sessions from 0 files\n"
    assert result.stderr == (
        "no *.jsonl file in the folders given: Claude Code keeps its transcripts in ~/.claude/projects,"
        " Codex its rollouts in ~/.codex/sessions\n"
    )


def test_truncated_last_line(workdir: Path) -> None:
    Path("cut.jsonl").write_bytes(b"".join(LINES[:3]) + LINES[3][:120])  # no newline: cut short
    result = toka("import", "cut.jsonl")
    assert result.returncode == 1
    assert result.stdout == "imported 3 new events (0 already present) into 1 session from 1 file\n"
    (skipped,) = result.stderr.splitlines()
    assert skipped.startswith("skipped cut.jsonl:4: truncated last line (Unterminated string")
    report = _import_json("cut.jsonl", exit_code=1)
    assert (report["created"], report["existing"]) == (0, 3)
    (bad,) = report["bad_lines"]
    assert (bad["path"], bad["line"]) == ("cut.jsonl", 4)
    assert skipped == f"skipped cut.jsonl:4: {bad['reason']}"
    assert _events() == 3


def test_non_json_line_in_the_middle(workdir: Path) -> None:
    Path("mixed.jsonl").write_bytes(LINES[0] + b"this is not json\n" + LINES[1])
    report = _import_json("mixed.jsonl", exit_code=1)
    assert report == {
        "files": 1,
        "formats": {"toka": 1},
        "events": 2,
        "created": 2,
        "existing": 0,
        "sessions": [EXAMPLE_SESSION],
        "unknown_types": {},
        "unknown_types_created": {},
        "bad_lines": [
            {"path": "mixed.jsonl", "line": 2, "reason": "not JSON (Expecting value: line 1 column 1 (char 0))"}
        ],
    }


def test_binary_line(workdir: Path) -> None:
    Path("bin.jsonl").write_bytes(LINES[0] + b"\xff\xfe\x00\x81binary\n" + LINES[1])
    result = toka("import", "bin.jsonl")
    assert result.returncode == 1
    assert result.stderr == "skipped bin.jsonl:2: not UTF-8 text\n"
    assert _events() == 2


def test_edited_line_no_longer_matches_its_id(workdir: Path) -> None:
    edited = LINES[7].replace(b"at most 3 attempts", b"at most 9 attempts")
    assert edited != LINES[7]
    Path("edited.jsonl").write_bytes(b"".join(LINES[:7]) + edited + b"".join(LINES[8:]))
    report = _import_json("edited.jsonl", exit_code=1)
    assert report["created"] == 22
    assert report["bad_lines"] == [
        {"path": "edited.jsonl", "line": 8, "reason": "the event does not hash to its id: it was changed after export"}
    ]
    # The edited event is not in the log under any id.
    texts = [
        e["payload"].get("text", "")
        for e in map(json.loads, invoke("events", EXAMPLE_SESSION, "--json").stdout.splitlines())
    ]
    assert not any("9 attempts" in text for text in texts)


def test_line_that_is_json_but_not_an_event(workdir: Path) -> None:
    Path("odd.jsonl").write_text('[1, 2]\n{"kind": "message"}\n{"session": "s", "kind": "bad kind!"}\n')
    report = _import_json("odd.jsonl", exit_code=1)
    assert report["created"] == 0
    assert [(b["line"], b["reason"]) for b in report["bad_lines"]] == [
        (1, "not a JSON object but list"),
        (2, "event needs a 'session'"),
        (3, "kind 'bad kind!' is not a dotted name"),
    ]


def test_empty_file(workdir: Path) -> None:
    Path("empty.jsonl").write_bytes(b"")
    result = toka("import", "empty.jsonl")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "imported 0 new events (0 already present) into 0 sessions from 1 file\n"
    assert result.stderr == ""
    assert _import_json("empty.jsonl", exit_code=0) == {
        "files": 1,
        "formats": {"toka": 1},
        "events": 0,
        "created": 0,
        "existing": 0,
        "sessions": [],
        "unknown_types": {},
        "unknown_types_created": {},
        "bad_lines": [],
    }


def test_missing_file_is_not_found(workdir: Path) -> None:
    result = toka("import", "missing.jsonl")
    assert result.returncode == 3
    assert result.stdout == ""
    assert result.stderr.splitlines() == ["error: no file or folder at missing.jsonl", "hint: check the path"]


def test_missing_file_among_good_ones_imports_nothing(workdir: Path) -> None:
    Path("good.jsonl").write_bytes(LINES[0])
    result = invoke("import", "good.jsonl", "missing.jsonl")
    assert result.exit_code == 3
    assert _events() == 0


def test_folder_of_jsonl_files(workdir: Path) -> None:
    folder = Path("exports")
    (folder / "nested").mkdir(parents=True)
    (folder / "a.jsonl").write_bytes(b"".join(LINES[:10]))
    (folder / "b.jsonl").write_bytes(b"".join(LINES[10:]) + b"{broken\n")
    (folder / "nested" / "c.jsonl").write_text(
        # A plain new event (no id): its key makes importing it twice a no-op too.
        '{"session": "other", "kind": "message", "key": "c-1", "payload": {"text": "plain"}}\n'
    )
    (folder / "notes.txt").write_text("not an export, and not a *.jsonl file\n")
    result = toka("import", "exports")
    assert result.returncode == 1
    assert result.stdout == "imported 24 new events (0 already present) into 2 sessions from 3 files\n"
    assert result.stderr.splitlines() == [
        "skipped exports/b.jsonl:14: not JSON (Expecting property name enclosed in double quotes:"
        " line 1 column 2 (char 1))"
    ]
    report = _import_json("exports", exit_code=1)
    assert {k: report[k] for k in ("files", "events", "created", "existing", "sessions")} == {
        "files": 3,
        "events": 24,
        "created": 0,
        "existing": 24,
        "sessions": [EXAMPLE_SESSION, "other"],
    }
    assert [(b["path"], b["line"]) for b in report["bad_lines"]] == [("exports/b.jsonl", 14)]
    assert toka("verify").returncode == 0


def test_folder_with_only_good_files_exits_0(workdir: Path) -> None:
    Path("d").mkdir()
    Path("d/one.jsonl").write_bytes(b"".join(LINES[:5]))
    Path("d/two.jsonl").write_bytes(b"".join(LINES[5:]))
    assert _import_json("d", exit_code=0)["created"] == 23


def test_many_bad_lines_are_listed_on_stderr_up_to_a_limit(workdir: Path) -> None:
    Path("junk.jsonl").write_text("junk\n" * 25)
    result = invoke("import", "junk.jsonl")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[:2] == [
        "skipped junk.jsonl:1: not JSON (Expecting value: line 1 column 1 (char 0))",
        "skipped junk.jsonl:2: not JSON (Expecting value: line 1 column 1 (char 0))",
    ]
    assert len(lines) == 21
    assert lines[-1] == "... and 5 more bad lines (see --json)"
    assert len(_import_json("junk.jsonl", exit_code=1)["bad_lines"]) == 25


def test_bad_line_with_brackets_in_its_path_is_reported_verbatim(workdir: Path) -> None:
    # Diagnostics are plain text: "[bold]" or "[i]" in a path is not read as Rich markup.
    Path("[bold]x").mkdir()
    Path("[bold]x/a[i].jsonl").write_text("nope\n")
    result = invoke("import", "[bold]x")
    assert result.exit_code == 1
    assert result.stderr == "skipped [bold]x/a[i].jsonl:1: not JSON (Expecting value: line 1 column 1 (char 0))\n"
