"""`toka import` of real agent transcripts: Claude Code and Codex, detected per file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_support import EXAMPLE, invoke
from transcripts import TRANSCRIPTS, shared_or_skip

from daemon.ingest.formats import detect


def import_json(*args: str, exit_code: int = 0) -> dict:  # type: ignore[type-arg]
    result = invoke("import", *args, "--json")
    assert result.exit_code == exit_code, result.stderr
    report: dict = json.loads(result.stdout)  # type: ignore[type-arg]
    return report


def test_formats_are_detected_per_file() -> None:
    claude = shared_or_skip("fixtures", "transcripts", "claude")
    codex = shared_or_skip("fixtures", "transcripts", "codex")
    assert {detect(p) for p in claude.rglob("*.jsonl")} == {"claude-code"}
    assert {detect(p) for p in codex.rglob("*.jsonl")} == {"codex"}
    assert detect(EXAMPLE) == "toka"


def test_every_fixture_imports_and_a_second_import_adds_nothing(tmp_path: Path) -> None:
    shared_or_skip("fixtures", "transcripts")
    folder = tmp_path / "transcripts"
    shutil.copytree(TRANSCRIPTS, folder, ignore=shutil.ignore_patterns("*.json", "*.md"))
    files = sorted(folder.rglob("*.jsonl"))
    first = import_json(str(folder))
    assert first["bad_lines"] == []
    assert first["files"] == len(files)
    assert first["formats"] == {
        "claude-code": sum(1 for p in files if "claude" in p.parts),
        "codex": sum(1 for p in files if "codex" in p.parts),
    }
    assert first["created"] > 0 and first["events"] == first["created"] + first["existing"]
    again = import_json(str(folder))
    assert again["created"] == 0
    assert again["existing"] == again["events"] == first["events"]
    assert invoke("verify").exit_code == 0


def test_subagents_land_in_their_parent_session() -> None:
    main = shared_or_skip("fixtures", "transcripts", "claude", "marot__fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    report = import_json(str(main), str(main.with_suffix("") / "subagents"))
    assert report["bad_lines"] == []
    assert len(report["sessions"]) == 1
    session = json.loads(invoke("show", report["sessions"][0], "--json").stdout)
    assert {"main", "a93ccab", "aa84377", "acompact-70d8e7"} <= set(session["agents"])


def test_a_session_file_brings_its_subagents_with_it() -> None:
    main = shared_or_skip("fixtures", "transcripts", "claude", "marot__8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
    subagents = sorted((main.with_suffix("") / "subagents").glob("agent-*.jsonl"))
    report = import_json(str(main))
    assert report["files"] == 1 + len(subagents) == 3
    session = json.loads(invoke("show", report["sessions"][0], "--json").stdout)
    assert {"main", "a7be2f0", "acompact-f46190"} <= set(session["agents"])
    again = import_json(str(main), *map(str, subagents))  # named twice: read once
    assert again["files"] == 3 and again["created"] == 0


def test_a_file_of_unknown_records_is_reported_not_guessed(tmp_path: Path) -> None:
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"hello": 1}\n{"hello": 2}\n')
    report = import_json(str(odd), exit_code=1)
    assert report["events"] == 0
    assert [(b["line"], b["reason"]) for b in report["bad_lines"]] == [
        (0, "not a format toka knows (name one with --format)")
    ]


def test_an_unknown_format_name_is_a_usage_error() -> None:
    result = invoke("import", str(EXAMPLE), "--format", "word")
    assert result.exit_code == 2
    assert "unknown format 'word'" in result.stderr


@pytest.mark.parametrize("fmt", ["codex", "claude-code"])
def test_a_named_format_is_used_as_named(fmt: str) -> None:
    # A toka export read as another format: nothing of it is lost, all of it is kept raw.
    report = import_json(str(EXAMPLE), "--format", fmt)
    assert report["formats"] == {fmt: 1}
    assert report["bad_lines"] == []


def test_a_second_import_keeps_nothing_new_and_says_nothing_of_unknown_types() -> None:
    path = shared_or_skip("fixtures", "transcripts", "claude", "marot__8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
    first = invoke("import", str(path))
    assert first.exit_code == 0 and "records of types toka does not know" in first.stderr
    again = invoke("import", str(path))
    assert again.exit_code == 0, again.stderr
    assert again.stdout.startswith("imported 0 new events") and again.stderr == ""
    report = import_json(str(path))
    assert report["created"] == 0 and report["unknown_types_created"] == {}
    # the session and its two subagent files
    assert report["unknown_types"] == {"progress": 1196, "file-history-snapshot": 13, "queue-operation": 1}


def _gemini_session(path: Path) -> Path:
    """A Gemini CLI chat recording: its metadata line (sessionId, projectHash), messages, updates."""
    records = [
        {"sessionId": "7d1c0f52-5b8e-4c1e-9a0e-0f2d3c4b5a69", "projectHash": "ab12" * 16,
         "startTime": "2026-03-14T09:30:00.000Z", "lastUpdated": "2026-03-14T09:31:00.000Z", "kind": "main"},
        {"id": "m1", "timestamp": "2026-03-14T09:30:01.000Z", "type": "user", "content": [{"text": "hi"}]},
        {"id": "m2", "timestamp": "2026-03-14T09:30:05.000Z", "type": "gemini", "content": [{"text": "hello"}],
         "model": "gemini-2.5-pro", "tokens": {"input": 100, "output": 5}},
        {"$set": {"lastUpdated": "2026-03-14T09:31:00.000Z"}},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_a_gemini_cli_session_is_refused_whole_and_the_other_files_imported(tmp_path: Path) -> None:
    gemini = _gemini_session(tmp_path / "session-2026-03-14T09-30-7d1c0f52.jsonl")
    report = import_json(str(gemini), str(EXAMPLE), exit_code=1)
    assert report["formats"] == {"toka": 1} and report["sessions"] == ["fix-login-timeout"]
    assert report["unknown_types_created"] == {}
    assert [(b["path"], b["line"], b["reason"]) for b in report["bad_lines"]] == [
        (str(gemini), 0, "not a format toka knows (name one with --format)")
    ]
    result = invoke("import", str(gemini))
    assert result.exit_code == 1
    assert f"skipped {gemini}:0: not a format toka knows" in result.stderr


def test_a_json_array_of_hook_payloads_is_refused_saying_why(tmp_path: Path) -> None:
    payloads = [
        {"session_id": "s1", "hook_event_name": "Stop", "cwd": "/w", "stop_hook_active": False},
        {"session_id": "s1", "hook_event_name": "SessionEnd", "cwd": "/w", "reason": "exit"},
    ]
    for name, text in (("stop.json", json.dumps(payloads, indent=2)), ("one-line.json", json.dumps(payloads))):
        logged = tmp_path / name
        logged.write_text(text + "\n")
        result = invoke("import", str(logged), str(EXAMPLE))
        assert result.exit_code == 1
        lines = result.stderr.splitlines()
        assert lines == [f"skipped {logged}:0: a JSON array, not JSON lines: {lines[0].split('JSON lines: ')[1]}"]
        assert "toka hook claude-code" in lines[0]
        assert "imported" in result.stdout


def test_the_summary_says_how_many_more_unknown_types_it_left_out(tmp_path: Path) -> None:
    odd = tmp_path / "odd.jsonl"
    records = [{"session": "s", "kind": "message", "payload": {"role": "user", "text": "x"}}]
    odd.write_text("".join(json.dumps(r) + "\n" for r in records))
    claude = tmp_path / "claude.jsonl"
    lines = [{"type": f"mystery-{i}", "sessionId": "c1", "uuid": f"u{i}", "timestamp": "2026-03-14T09:30:00Z"}
             for i in range(8)]  # fmt: skip
    claude.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = invoke("import", str(claude))
    assert result.exit_code == 0, result.stderr
    assert "records of types toka does not know as raw events" in result.stderr
    assert ", +3 more (see --json))" in result.stderr
